"""TORCH_EMU_LAUNCH_BLOCKING=1: every launch waits for its kernel, as CUDA_LAUNCH_BLOCKING=1.

CI runs the emu conformance and stream tests in this mode
(//tests:torch_emu_launch_blocking_test), the way tools/dev gpu-check's first
pass runs cuda, so a test that assumes asynchrony without the `asynchronous`
marker fails there. These tests check the mode itself, each in a process of
its own (the driver reads the variable once).
"""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import torch_core as tc, torch_emu
from torch_emu import _EMUC
print(_EMUC._launch_blocking())
s = torch_emu.Stream(0)
_EMUC._sleep(0, s.id, 100.0)  # a kernel: returns after it ran, or at once
print(s.query())
with tc.stream(s):
    y = tc.full((1 << 16,), 2.0, device="emu:0") * 3
    print(_EMUC._queued_tasks(0, s.id) == 0 and s.query())
    print(float(y.sum().numpy()))
try:
    _EMUC._block_stream(0, s.id).open()
    print("held")
except RuntimeError as error:
    print(error)
"""


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "TORCH_EMU_LAUNCH_BLOCKING"}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "PYTHONPATH": os.pathsep.join(sys.path), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_launch_waits_and_a_stream_cannot_be_held() -> None:
    proc = _run(PROBE, TORCH_EMU_LAUNCH_BLOCKING="1")
    assert proc.returncode == 0, proc.stderr
    blocking, idle_after_sleep, idle_after_ops, total, hold = proc.stdout.splitlines()
    assert blocking == "True"
    assert idle_after_sleep == "True"  # the 100 ms kernel had run when _sleep returned
    assert idle_after_ops == "True"
    assert hold.startswith("emu: cannot hold a stream with TORCH_EMU_LAUNCH_BLOCKING=1")
    assert "mark it `asynchronous`" in hold
    assert float(total) == 6.0 * (1 << 16)


def test_by_default_launches_are_asynchronous() -> None:
    proc = _run(PROBE + "\n", TORCH_EMU_LAUNCH_BLOCKING="0")
    assert proc.returncode == 0, proc.stderr
    blocking, idle_after_sleep, _, total, hold = proc.stdout.splitlines()
    assert blocking == "False"
    assert idle_after_sleep == "False"  # the kernel is still sleeping
    assert hold == "held"
    assert float(total) == 6.0 * (1 << 16)


def test_a_bad_value_makes_emu_unavailable_with_the_reason() -> None:
    proc = _run("import torch_emu; print(torch_emu.is_available())", TORCH_EMU_LAUNCH_BLOCKING="2")
    assert proc.stdout.strip() == "False", proc.stderr
    proc = _run(
        "import torch_core as tc, torch_emu; tc.ones(1, device='emu:0')",
        TORCH_EMU_LAUNCH_BLOCKING="2",
    )
    assert "TORCH_EMU_LAUNCH_BLOCKING=2 is neither 0 nor 1" in proc.stderr
