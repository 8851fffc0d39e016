"""torch_cuda on a machine without a GPU: imports, reports no device, fails clearly."""

from __future__ import annotations

import numpy as np
import pytest

import torch_core
import torch_cuda

NO_DEVICE = torch_cuda.device_count() == 0
needs_no_device = pytest.mark.skipif(not NO_DEVICE, reason="checks the no-device behaviour")


def test_import_registers_the_cuda_device_type() -> None:
    assert "cuda" in torch_core.registered_device_types()
    assert torch_core.device("cuda:1").type == "cuda"


def test_runtime_is_linked() -> None:
    # cudaRuntimeGetVersion needs no GPU: it proves cudart is really linked in.
    assert torch_cuda.runtime_version() // 1000 >= 12


@needs_no_device
def test_reports_no_device() -> None:
    assert torch_cuda.is_available() is False
    assert torch_cuda.device_count() == 0


@needs_no_device
@pytest.mark.parametrize(
    "use",
    [
        torch_cuda.current_device,
        lambda: torch_cuda.set_device(0),
        torch_cuda.synchronize,
        torch_cuda.Stream,
        torch_cuda.current_stream,
        torch_cuda.memory_allocated,
    ],
)
def test_device_use_names_the_cause(use) -> None:
    with pytest.raises(
        RuntimeError, match=r"CUDA is not available: no (usable CUDA driver|CUDA device)"
    ):
        use()


@needs_no_device
@pytest.mark.parametrize(
    "use",
    [
        lambda: torch_core.ones(2, device="cuda:0"),
        lambda: torch_core.tensor(np.arange(3.0), device="cuda:0"),
        lambda: torch_core.ones(2).to("cuda:0"),
        lambda: torch_core.Stream("cuda:0"),
        lambda: torch_cuda.get_device_properties(0),
    ],
)
def test_tensor_and_stream_use_name_the_cuda_error(use) -> None:
    # Core refuses the device with the backend's reason: the CUDA error's name.
    with pytest.raises(
        RuntimeError,
        match=r"'cuda:0' is not usable: no usable CUDA driver \(cudaErrorInsufficientDriver \(35\)",
    ):
        use()


@needs_no_device
@pytest.mark.parametrize(
    "use",
    [
        lambda: torch_cuda.Event(0),
        lambda: torch_cuda.device(0).__enter__(),
        lambda: torch_cuda.get_device_name(),
        lambda: torch_cuda._CUDAC._sleep(10, 0, 0),
    ],
)
def test_more_device_uses_name_the_cause(use) -> None:
    with pytest.raises(
        RuntimeError, match=r"CUDA is not available: no usable CUDA driver \(cudaError"
    ):
        use()


def test_stream_is_cores_generic_stream() -> None:
    # No CUDA-specific stream class: torch_cuda.Stream builds torch_core's Stream on "cuda:N".
    assert torch_cuda.stream is torch_core.stream
    assert not hasattr(torch_cuda._CUDAC, "_Stream")
    assert not hasattr(torch_cuda._CUDAC, "_binary_on_device")


def test_every_core_op_has_a_cuda_kernel() -> None:
    cpu_ops = {op for op in torch_core._C.kernel_ops("cpu") if not op.startswith("fused_")}
    cuda_ops = set(torch_core._C.kernel_ops("cuda"))
    assert cpu_ops == {
        "add", "sub", "mul", "div", "neg", "relu", "exp", "tanh",
        "copy", "fill", "sum", "max", "softmax", "matmul",
    }  # fmt: skip
    assert cuda_ops >= cpu_ops, f"missing CUDA kernels: {sorted(cpu_ops - cuda_ops)}"


def test_profiler_stubs_are_registered() -> None:
    assert torch_cuda._CUDAC._has_profiler_stubs() is True


def test_profiling_cpu_work_with_cuda_loaded_still_works() -> None:
    # The CUDA stubs are registered but only asked for marks on CUDA tensors;
    # record_function pushes NVTX ranges, which are no-ops without a tool.
    from torch_core.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.DEVICE]) as prof:
        with record_function("step"):
            torch_core.ones(3).relu()
    names = [e.name for e in prof.events]
    assert "step" in names and "relu" in names
    assert torch_cuda._CUDAC._nvtx_depth() == 0


def test_backend_settings_validate() -> None:
    assert torch_cuda.backends.matmul.allow_tf32 is False
    torch_cuda.backends.matmul.allow_tf32 = True
    try:
        assert torch_cuda.backends.matmul.allow_tf32 is True
        with pytest.raises(TypeError, match="allow_tf32 must be a bool"):
            torch_cuda.backends.matmul.allow_tf32 = 1
    finally:
        torch_cuda.backends.matmul.allow_tf32 = False


def test_nvtx_ranges_nest_per_thread() -> None:
    c = torch_cuda._CUDAC
    assert c._nvtx_depth() == 0
    assert c._nvtx_push("outer") == 1
    assert c._nvtx_push("inner") == 2
    assert c._nvtx_pop() == 1
    assert c._nvtx_pop() == 0
    with pytest.raises(RuntimeError, match="no NVTX range is open"):
        c._nvtx_pop()


def test_reduce_ops_parse() -> None:
    assert [torch_cuda._CUDAC._parse_reduce_op(n) for n in ("sum", "max", "min")] == [0, 1, 2]
    with pytest.raises(ValueError, match="unknown reduce op 'prod'"):
        torch_cuda._CUDAC._parse_reduce_op("prod")
