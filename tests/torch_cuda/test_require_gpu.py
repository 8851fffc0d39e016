"""TORCH_CUDA_REQUIRE_GPU=1 turns "no usable GPU" from a skip into a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import torch_cuda

HERE = Path(__file__).absolute().parent


def _run_gpu_file(require: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("TORCH_CUDA_REQUIRE_GPU", None)
    if require is not None:
        env["TORCH_CUDA_REQUIRE_GPU"] = require
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(HERE / "test_gpu_memory.py"),
        ],
        cwd=HERE.parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.skipif(
    torch_cuda.device_count() > 0, reason="this machine has a GPU: nothing to skip or fail"
)
def test_without_a_device_gpu_tests_skip_by_default_and_fail_when_required() -> None:
    skipped = _run_gpu_file(None)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "skipped" in skipped.stdout
    required = _run_gpu_file("1")
    assert required.returncode == 1, required.stdout + required.stderr
    out = required.stdout + required.stderr
    assert "TORCH_CUDA_REQUIRE_GPU=1" in out
    assert torch_cuda._CUDAC._unavailable_reason() in out
