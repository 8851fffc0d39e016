"""Registry guards: a name held by one backend cannot be taken by another.

A copied backend that keeps its template's names (process-group backend,
device type, fuser, profiler stubs) fails at import, naming both backends,
instead of silently replacing the original.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import torch_core as tc
import torch_emu  # noqa: F401  (holds 'emu', its fuser, profiler stubs and 'eccl')
from builds import import_fake_device
from torch_core import distributed as dist
from torch_core import jit
from torch_core._registration import RegistrationError

_fake_device = import_fake_device()


def _package(root: Path, name: str, body: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text(body)


def test_two_backends_claiming_one_process_group_name_fail_at_import(tmp_path: Path) -> None:
    # What a copy of torch_emu did before: register its collectives as 'eccl'.
    _package(
        tmp_path,
        "torch_copied",
        "from torch_core import distributed as dist\n"
        "from torch_emu.distributed import EcclBackend\n"
        "dist.register_backend('eccl', EcclBackend, ['copied'])\n",
    )
    proc = subprocess.run(
        [sys.executable, "-c", "import torch_emu, torch_copied"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert (
        "process-group backend 'eccl' is already registered by torch_emu; "
        "torch_copied cannot register it too" in proc.stderr
    ), proc.stderr
    # emu's backend is untouched in the process that refused the copy.
    assert dist.registered_backends()["eccl"] == ("emu",)


def test_the_same_owner_may_register_again() -> None:
    info = dist.registered_backends()["eccl"]
    from torch_emu.distributed import EcclBackend

    dist.register_backend("eccl", EcclBackend, list(info), owner="torch_emu")
    assert dist.registered_backends()["eccl"] == info


def test_a_second_fuser_for_a_device_type_names_both() -> None:
    with pytest.raises(
        RegistrationError,
        match=r"fuser for device type 'emu' is already registered by torch_emu; "
        r"torch_acme cannot register it too",
    ):
        jit.register_fuser("emu", jit.HostCodeFuser("emu"), owner="torch_acme")
    with pytest.raises(RegistrationError, match="by torch_core; torch_acme cannot"):
        jit.register_fuser("cpu", jit.HostCodeFuser("cpu"), owner="torch_acme")


def test_a_device_type_name_taken_by_another_backend_names_both() -> None:
    with pytest.raises(
        ValueError,
        match=r"device type 'emu' is already registered by torch_emu; torch_acme cannot "
        r"register it too \(names are unique across backends\)",
    ):
        _fake_device._register_device_type_as("torch_acme", "emu")
    with pytest.raises(ValueError, match="device type 'cpu' is already registered by torch_core"):
        _fake_device._register_device_type_as("torch_acme", "cpu")
    assert _fake_device._device_type_owner("fake") == "_fake_device"
    assert "emu" in tc.registered_device_types()


def test_profiler_stubs_of_another_backend_name_both() -> None:
    with pytest.raises(
        ValueError,
        match=r"profiler stubs for device type 'emu' is already registered by torch_emu; "
        r"torch_acme cannot",
    ):
        _fake_device._register_profiler_stubs_as("torch_acme", "emu")


# ---- replacing one of core's kernels (docs/adding-a-backend.md) ----------------------


@pytest.fixture(scope="module")
def acme() -> str:
    """A device type owned by torch_acme with core's shared kernels, as the template has them."""
    _fake_device._register_core_kernels_as("torch_acme", "kernel_acme")
    return "kernel_acme"


def test_registering_a_core_kernel_twice_names_the_owner_and_the_fix(acme: str) -> None:
    with pytest.raises(ValueError) as error:
        _fake_device._binary_kernel_as("torch_acme", "add", acme, "add")
    message = str(error.value)
    assert message.startswith(
        "op 'add' already has a kernel for device type 'kernel_acme' (registered by torch_acme); "
        'to replace it, call at::Dispatcher::instance().override_kernel("add", type, kernel)'
    ), message
    assert "docs/adding-a-backend.md" in message


def test_the_owner_overrides_one_core_kernel_and_keeps_the_others(acme: str) -> None:
    ones = tc.ones(3, device=f"{acme}:0")
    assert (ones + ones).numpy().tolist() == [2.0, 2.0, 2.0]
    _fake_device._binary_kernel_as("torch_acme", "add", acme, "sub", override=True)
    assert (ones + ones).numpy().tolist() == [0.0, 0.0, 0.0]  # the replacement runs
    assert (ones * 3).numpy().tolist() == [3.0, 3.0, 3.0]  # core's mul is untouched
    assert _fake_device._kernel_owner("add", acme) == "torch_acme"
    assert tc.ones(2).add(tc.ones(2)).numpy().tolist() == [2.0, 2.0]  # the CPU's add too
    _fake_device._binary_kernel_as("torch_acme", "add", acme, "add", override=True)
    assert (ones + ones).numpy().tolist() == [2.0, 2.0, 2.0]


def test_only_the_device_types_owner_may_override(acme: str) -> None:
    with pytest.raises(
        ValueError,
        match=r"torch_other cannot override op 'add' for device type 'kernel_acme': the device "
        r"type is registered by torch_acme, and only its owner may replace its kernels",
    ):
        _fake_device._binary_kernel_as("torch_other", "add", acme, "sub", override=True)
    with pytest.raises(ValueError, match="'cpu': the device type is registered by torch_core"):
        _fake_device._binary_kernel_as("torch_acme", "add", "cpu", "sub", override=True)
    assert _fake_device._kernel_owner("add", "cpu") == "torch_core"


def test_override_of_an_op_without_a_kernel_is_refused(acme: str) -> None:
    with pytest.raises(
        ValueError,
        match=r"cannot override op 'addd' for device type 'kernel_acme': it has no kernel to "
        r"replace; use register_kernel for a new op",
    ):
        _fake_device._binary_kernel_as("torch_acme", "addd", acme, "sub", override=True)
