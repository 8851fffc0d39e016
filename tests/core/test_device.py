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
