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
    ],
)
def test_device_use_names_the_cause(use) -> None:
    with pytest.raises(
        RuntimeError, match=r"CUDA is not available: no (usable CUDA driver|CUDA device)"
    ):
        use()


@needs_no_device
def test_kernel_launch_without_device_raises_not_crashes() -> None:
    with pytest.raises(RuntimeError, match=r"'cuda:0' is not usable: .*cudaError\w+ \(\d+\)"):
        torch_cuda._CUDAC._binary_on_device("add", [1.0], [2.0])


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


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("op", "reference"),
    [
        ("add", np.add),
        ("sub", np.subtract),
        ("mul", np.multiply),
        ("div", np.divide),
        ("maximum", np.maximum),
        ("minimum", np.minimum),
    ],
)
def test_binary_kernel_matches_numpy(op: str, reference) -> None:
    rng = np.random.default_rng(0)
    # Larger than one grid of 65535 x 256 threads would be slow; 1e6 still
    # crosses many blocks and a partial last block.
    a = rng.standard_normal(1_000_003).astype(np.float32)
    b = rng.standard_normal(1_000_003).astype(np.float32) + 3.0
    out = np.asarray(
        torch_cuda._CUDAC._binary_on_device(op, a.tolist(), b.tolist()), dtype=np.float32
    )
    np.testing.assert_allclose(out, reference(a, b), rtol=1e-6)


@pytest.mark.gpu
def test_stream_query_and_synchronize() -> None:
    stream = torch_cuda.Stream()
    assert stream.device == torch_cuda.current_device()
    stream.synchronize()
    assert stream.query() is True
