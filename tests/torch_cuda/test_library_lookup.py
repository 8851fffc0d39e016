"""NVRTC and NCCL come from the toolkit _CUDAC's runtime was loaded from, before anything else.

A CUDA build of torch, or any other package, can put NVIDIA's wheels into
site-packages ahead of the pinned toolkit on sys.path. torch_cuda looks
beside the libcudart its RUNPATH found first (torch_cuda._libraries), so
those wheels cannot shadow the NVRTC and NCCL it was built and pinned with.
Here a broken "nvidia" package first on sys.path stands in for them: the old
lookup (the nvidia namespace package in sys.path order) loaded it and failed.
No GPU is needed: NVRTC and NCCL report their versions without one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import torch_cuda
from torch_cuda import _libraries

PROBE = """
import importlib.util, torch_cuda
from torch_cuda import _libraries, distributed, jit
print(importlib.util.find_spec("nvidia").submodule_search_locations[0])
print(_libraries.runtime_directory())
print(jit.nvrtc_library())
print(distributed.nccl_library())
print(".".join(map(str, jit.nvrtc_version())))
print(".".join(map(str, distributed.nccl_version())))
"""


def test_a_shadowing_nvidia_package_earlier_on_the_path_is_not_used(tmp_path: Path) -> None:
    runtime = _libraries.runtime_directory()
    if runtime is None or runtime.parent.parent.name != "nvidia":
        pytest.skip(f"the CUDA runtime is not from NVIDIA's wheel layout here ({runtime})")
    shadow = tmp_path / "nvidia"
    for lib in (
        "cu13/lib/libnvrtc.so.13",
        "cu13/lib/libnvrtc-builtins.so.13.0",
        "nccl/lib/libnccl.so.2",
    ):
        (shadow / lib).parent.mkdir(parents=True, exist_ok=True)
        (shadow / lib).write_bytes(b"")  # dlopen: "file too short"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_CUDA_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *sys.path])
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, runtime_dir, nvrtc, nccl, nvrtc_version, nccl_version = proc.stdout.splitlines()
    assert Path(first) == shadow  # the old lookup's first choice
    assert Path(nvrtc).parent == Path(runtime_dir) == runtime
    assert Path(nccl).parent == runtime.parent.parent / "nccl" / "lib"
    assert nvrtc_version.startswith("13.") and nccl_version.startswith("2.")


def test_an_explicit_library_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_CUDA_NVRTC_LIBRARY", "/opt/elsewhere/libnvrtc.so.13")
    monkeypatch.setenv("TORCH_CUDA_NCCL_LIBRARY", "/opt/elsewhere/libnccl.so.2")
    assert torch_cuda.jit.nvrtc_library() == "/opt/elsewhere/libnvrtc.so.13"
    assert torch_cuda.distributed.nccl_library() == "/opt/elsewhere/libnccl.so.2"
