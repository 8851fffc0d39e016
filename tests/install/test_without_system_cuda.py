"""torch_cuda on a driver-only host: no system CUDA toolkit, no CUDA in the loader's cache.

The usual cloud GPU image has a driver and no toolkit. With every system CUDA
hidden (tests/bazel/hide_cuda.py: /usr/local/cuda*, and the loader cache
rebuilt without them), the in-tree extension and the installed wheel must
both import and find libcudart through their own RUNPATH (the hermetic
toolkit, NVIDIA's runtime wheel), and gpu-check must name the real cause,
no driver, never "build it first". Before the RUNPATH named the soname's
file, the in-tree import failed here (libcudart.so.13 not found) and
gpu-check blamed the build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from installed import Venv

from bazel.hide_cuda import Ran, run_hidden, unshare_works
from builds import REPO, cuda_extension_built

pytestmark = pytest.mark.bazel

PROBE = (
    "import os, torch_cuda; "
    "print(os.path.realpath(torch_cuda._CUDAC._runtime_library())); "
    "print(torch_cuda.device_count()); "
    "print(torch_cuda._CUDAC._unavailable_reason())"
)
IN_TREE_ROOTS = ("core", "third_device/torch_cuda", "third_device/torch_emu")


@pytest.fixture(scope="module", autouse=True)
def _can_hide() -> None:
    reason = unshare_works()
    if reason:
        pytest.skip(reason)


def _check(probe: Ran, gpucheck: Ran, runtime_under: Path) -> None:
    assert probe.returncode == 0, probe.stderr[-3000:]
    runtime, count, reason = probe.stdout.splitlines()
    assert Path(runtime).is_relative_to(os.path.realpath(runtime_under)), runtime
    if count != "0":
        pytest.skip("this machine has a CUDA device")
    assert "driver" in reason.lower(), reason
    assert gpucheck.returncode == 2, gpucheck.stdout + gpucheck.stderr
    assert "torchsplit: error: no usable CUDA device: no usable CUDA driver" in gpucheck.stderr
    assert "build it first" not in gpucheck.stderr and "not built" not in gpucheck.stderr
    assert "Traceback" not in gpucheck.stderr


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LD_"))}
    env.update(extra)
    return env


def test_in_tree_torch_cuda_finds_its_runtime_with_system_cuda_hidden(tmp_path: Path) -> None:
    if not cuda_extension_built():
        pytest.skip("torch_cuda is not built here (cpu-only build or no CUDA toolkit)")
    solib = sorted((REPO / "bazel-bin" / "_solib_k8").glob("*cuda_Uruntime*/libcudart.so*"))[0]
    toolkit_lib = Path(os.path.realpath(solib)).parent
    if str(toolkit_lib).startswith("/usr/local/cuda"):
        pytest.skip(f"built with the system toolkit ({toolkit_lib}): hiding it hides the runtime")
    path = [str(REPO / "tools" / "python")]
    path += [str(base / root) for root in IN_TREE_ROOTS for base in (REPO, REPO / "bazel-bin")]
    env = _clean_env(PYTHONPATH=os.pathsep.join(path))
    python = sys.executable
    probe, gpucheck = run_hidden(
        [
            {"argv": [python, "-c", PROBE], "env": env},
            {"argv": [python, "-m", "torchsplit.gpucheck"], "env": env},
        ],
        tmp_path,
        timeout=600,
    )
    _check(probe, gpucheck, toolkit_lib)


def test_installed_torch_cuda_finds_its_runtime_with_system_cuda_hidden(
    venv: Venv, wheels: dict[str, Path], tmp_path: Path
) -> None:
    if "torch_cuda" not in wheels:
        pytest.skip("no torch_cuda wheel on this machine")
    python = str(venv.python)
    probe, gpucheck = run_hidden(
        [
            {"argv": [python, "-c", PROBE], "env": _clean_env(), "cwd": str(venv.workdir)},
            # gpucheck from the checkout; torch_cuda from the virtualenv.
            {
                "argv": [python, "-m", "torchsplit.gpucheck"],
                "env": _clean_env(PYTHONPATH=str(REPO / "tools" / "python")),
                "cwd": str(venv.workdir),
            },
        ],
        tmp_path,
        timeout=600,
    )
    _check(probe, gpucheck, venv.site_packages / "nvidia")
