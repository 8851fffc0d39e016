"""torch_hip on a machine without an AMD GPU: imports, reports no device, fails clearly.

torch_hip's runtime is torch_cuda's, hipified: these are torch_cuda's
no-GPU guarantees (tests/torch_cuda/test_without_gpu.py) holding for the
translation, plus what torch_hip writes itself.
"""

from __future__ import annotations

import re

import pytest

import torch_core
import torch_hip

NO_DEVICE = torch_hip.device_count() == 0
needs_no_device = pytest.mark.skipif(not NO_DEVICE, reason="checks the no-device behaviour")


def test_import_registers_the_hip_device_type() -> None:
    assert "hip" in torch_core.registered_device_types()
    assert torch_core.device("hip:1").type == "hip"
    assert torch_hip.core.runtime.DEVICE_TYPE == "hip"


def test_hip_runtime_is_linked() -> None:
    # hipRuntimeGetVersion needs no GPU: libamdhip64 is really linked (5.2 -> 50221153).
    assert torch_hip.runtime_version() >= 50000000


@needs_no_device
def test_reports_no_device_with_the_reason() -> None:
    assert torch_hip.is_available() is False
    assert torch_hip.device_count() == 0
    assert torch_hip.unavailable_reason().startswith("no HIP device (hipError")


@needs_no_device
@pytest.mark.parametrize(
    "use",
    [
        lambda: torch_core.ones(2, device="hip:0"),
        lambda: torch_core.ones(2).to("hip:0"),
        lambda: torch_core.Stream("hip:0"),
        lambda: torch_hip.get_device_properties(0),
    ],
)
def test_device_use_names_the_hip_error(use) -> None:
    with pytest.raises(RuntimeError, match=r"'hip:0' is not usable: no HIP device \(hipError"):
        use()


@needs_no_device
@pytest.mark.parametrize(
    "use",
    [torch_hip.current_device, torch_hip.synchronize, lambda: torch_hip._HIPC._sleep(10, 0, 0)],
)
def test_more_device_uses_name_the_cause(use) -> None:
    with pytest.raises(RuntimeError, match=r"HIP is not available: no HIP device \(hipError"):
        use()


def test_every_core_op_has_a_hip_kernel() -> None:
    cpu_ops = {op for op in torch_core._C.kernel_ops("cpu") if not op.startswith("fused_")}
    hip_ops = set(torch_core._C.kernel_ops("hip"))
    assert hip_ops >= cpu_ops, f"missing HIP kernels: {sorted(cpu_ops - hip_ops)}"


def test_profiler_stubs_and_ranges() -> None:
    c = torch_hip._HIPC
    assert c._has_profiler_stubs() is True
    # RoctxRange.cpp (hand-written): depth only, no roctx in Debian 12.
    assert c._nvtx_push("outer") == 1
    assert c._nvtx_pop() == 0
    with pytest.raises(RuntimeError, match="no range is open"):
        c._nvtx_pop()


def test_what_torch_hip_lacks_says_why() -> None:
    from torch_hip.testing import ADAPTER

    assert "NVRTC" in torch_hip.FUSER_UNAVAILABLE and "hiprtc" in torch_hip.FUSER_UNAVAILABLE
    assert ADAPTER.lacks("fusion") == torch_hip.FUSER_UNAVAILABLE
    assert "RCCL" in (ADAPTER.lacks("distributed") or "")
    # Rccl.cpp (hand-written) answers every collective entry point with the reason.
    assert torch_hip._HIPC._nccl_loaded() is False
    with pytest.raises(RuntimeError, match=r"RCCL .* is not packaged in Debian 12"):
        torch_hip._HIPC._nccl_version()


@needs_no_device
def test_the_docs_example_runs_as_written() -> None:
    """docs/torch_hip.md's Python block: its values, then the error its last comment shows."""
    from builds import REPO

    doc = (REPO / "docs" / "torch_hip.md").read_text()
    block = doc.split("```python\n", 1)[1].split("```", 1)[0].splitlines()
    namespace: dict[str, object] = {}
    exec("\n".join(block[:-1]), namespace)
    assert eval(block[3].split("#")[0], namespace) is False
    assert repr(eval(block[4].split("#")[0], namespace)) == block[4].split("# ", 1)[1]
    expected = block[5].removeprefix("# RuntimeError: ").split(" (hipError")[0]
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        exec(block[-1], namespace)
