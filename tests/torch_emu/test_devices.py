"""emu beside cpu and a second plugin: memory isolation, configuration (copies and ops of
every backend are in tests/conformance/)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch_core as tc
import torch_emu
from builds import import_fake_device

import_fake_device()  # registers the test-only "fake" device type


def _mapped_ranges() -> list[tuple[int, int]]:
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            start, end = line.split()[0].split("-")
            ranges.append((int(start, 16), int(end, 16)))
    return ranges


def test_device_memory_is_never_a_host_pointer() -> None:
    tensors = [tc.ones(n, device=f"emu:{i}") for i in (0, 1) for n in (1, 1000, 1_000_000)]
    ranges = _mapped_ranges()
    for t in tensors:
        address = t.data_ptr()
        assert torch_emu._EMUC._is_device_address(address)
        assert not any(lo <= address < hi for lo, hi in ranges), hex(address)
    # The CPU hands out real host memory, for contrast.
    cpu = tc.ones(10).data_ptr()
    assert any(lo <= cpu < hi for lo, hi in ranges)


def test_two_plugins_coexist_with_the_cpu() -> None:
    assert {"cpu", "emu", "fake"} <= set(tc.registered_device_types())
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    on_fake = tc.tensor(data, device="fake:2")
    on_emu = tc.tensor(data, device="emu:1")
    np.testing.assert_array_equal((on_fake + on_fake).numpy(), data * 2)
    np.testing.assert_array_equal((on_emu * on_emu).numpy(), data * data)
    # Between two plugins there is no direct path: core stages through the host.
    moved = on_fake.to("emu:0").to("fake:1").to("emu:1")
    assert moved.numpy().tobytes() == data.tobytes()


def test_missing_kernel_names_the_op_and_the_device() -> None:
    t = tc.ones(3, device="fake:0")
    with pytest.raises(NotImplementedError, match=r"op 'mul' has no kernel for device 'fake:0'"):
        t * t
    with pytest.raises(
        NotImplementedError, match=r"op 'softmax' has no kernel for device 'fake:0'"
    ):
        t.softmax(0)


def test_unknown_device_and_index_errors() -> None:
    with pytest.raises(
        RuntimeError, match=r"device 'emu:2' does not exist: there are 2 emu device\(s\)"
    ):
        tc.ones(1, device="emu:2")
    with pytest.raises(ValueError, match="unknown device type 'npu'"):
        tc.ones(1, device="npu")


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_device_count_comes_from_the_environment() -> None:
    proc = _python("import torch_emu; print(torch_emu.device_count())", TORCH_EMU_DEVICES="4")
    assert proc.stdout.strip() == "4", proc.stderr


def test_bad_configuration_makes_emu_unavailable_with_the_reason() -> None:
    code = (
        "import torch_core as tc, torch_emu\n"
        "print(torch_emu.is_available())\n"
        "tc.ones(1, device='emu:0')\n"
    )
    proc = _python(code, TORCH_EMU_DEVICES="two")
    assert proc.stdout.strip() == "False"
    assert "TORCH_EMU_DEVICES='two' is not a non-negative integer" in proc.stderr


def test_backend_device_arguments_are_checked_for_their_type() -> None:
    assert str(torch_emu.current_stream(1).device) == "emu:1"
    with pytest.raises(ValueError, match="expected a 'emu' device, got 'cpu'"):
        torch_emu.memory_allocated("cpu")
