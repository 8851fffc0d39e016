"""The jit module's generated CUDA C: validated, and really compilable by nvcc."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import torch_cuda

source = torch_cuda._CUDAC._elementwise_kernel_source


def test_source_has_the_signature_and_expression() -> None:
    text = source("fused_0", 2, "fmaxf(in0 * in1, 0.0f)")
    assert 'extern "C" __global__ void fused_0(' in text
    assert "const float* __restrict__ in1_ptr" in text
    assert "out[i] = fmaxf(in0 * in1, 0.0f);" in text


@pytest.mark.parametrize(
    ("name", "inputs", "expression", "message"),
    [
        ("k", 1, "in0; system(0)", "unexpected character ';'"),
        ("k", 1, "in1 + 1", "uses 'in1'"),
        ("k", 2, "printf(in0)", "uses 'printf'"),
        ("1k", 1, "in0", "not a C identifier"),
        ("k", 0, "1", "at least one input"),
    ],
)
def test_bad_input_is_rejected(name: str, inputs: int, expression: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        source(name, inputs, expression)


def _nvcc() -> str | None:
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None
    )


@pytest.mark.skipif(_nvcc() is None, reason="no nvcc on this machine")
def test_generated_source_compiles_to_ptx_with_the_entry_point(tmp_path: Path) -> None:
    cu = tmp_path / "fused.cu"
    cu.write_text(source("fused_relu_mul", 2, "fmaxf(in0 * in1, 0.0f) + expf(in0)"))
    ptx = tmp_path / "fused.ptx"
    subprocess.run(
        [_nvcc(), "-ptx", "-arch=sm_90", str(cu), "-o", str(ptx)],
        check=True,
        capture_output=True,
        text=True,
    )
    text = ptx.read_text()
    assert ".target sm_90" in text
    assert ".visible .entry fused_relu_mul(" in text
