"""Core's device registry and Device parsing, through torch_core._C."""

from __future__ import annotations

import pytest

import torch_core


def test_cpu_is_built_in_and_first() -> None:
    assert torch_core.registered_device_types()[0] == "cpu"


def test_parse_and_print() -> None:
    cpu = torch_core.device("cpu")
    assert (cpu.type, cpu.index, str(cpu)) == ("cpu", 0, "cpu")
    assert repr(cpu) == "device(type='cpu', index=0)"
    assert torch_core.device("cpu:0") == cpu


def test_unknown_type_names_the_type_and_the_registered_ones() -> None:
    with pytest.raises(
        ValueError, match=r"unknown device type 'nosuch' in 'nosuch:1' \(registered: cpu"
    ):
        torch_core.device("nosuch:1")


@pytest.mark.parametrize("text", ["cpu:", "cpu:x", "cpu:-1", "cpu:1x", "cpu:99999"])
def test_malformed_index_is_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="index"):
        torch_core.device(text)


def test_cpu_has_one_device_and_is_usable() -> None:
    assert torch_core._C.device_count("cpu") == 1
    torch_core._C.check_usable("cpu")


def test_loads_beside_pytorch_in_one_process() -> None:
    # Sonames are process-wide: ours must not shadow PyTorch's libtorch_cpu.so.
    import subprocess
    import sys

    code = "import torch_core, torch; print(torch.ones(2).sum().item())"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": ":".join(sys.path)},
    )
    if "No module named 'torch'" in proc.stderr:
        pytest.skip("PyTorch is not installed")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2.0"
