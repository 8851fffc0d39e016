"""torch_cuda.jit on any machine: NVRTC from the pinned wheel compiles the fuser's CUDA C.

NVRTC needs no GPU, so the generated code is compiled here for an explicit
architecture (sm_90, an H100) and its PTX inspected.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import torch_core as tc
import torch_cuda
from torch_core import jit
from torch_cuda import jit as cuda_jit

REQUIREMENTS = Path(__file__).absolute().parents[2] / "tools" / "cuda" / "requirements_lock.txt"


def _pin(package: str) -> str:
    if not REQUIREMENTS.is_file():  # Bazel's runfiles hold the tests, not the lock
        pytest.skip("tools/cuda/requirements_lock.txt is not beside the tests")
    match = re.search(rf"^{re.escape(package)}==(\S+)", REQUIREMENTS.read_text(), re.MULTILINE)
    assert match, f"{package} is not pinned in tools/cuda/requirements_lock.txt"
    return match.group(1)


def _graph(fn, num_inputs: int, dtype: str) -> jit.Graph:
    x = tc.tensor(np.ones(3, dtype=np.float32))
    return jit.trace(fn, [x] * num_inputs, dtype)


CHAIN = (lambda a, b, c: ((a * b + c).relu().exp() - 2.5).tanh() / -a, 3)
SUM = (lambda a, b: (a * b - float("inf")).neg().sum(), 2)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path))
    cuda_jit.nvrtc_cache().clear_memory()
    jit.reset_stats()
    yield tmp_path / "nvrtc"
    cuda_jit.nvrtc_cache().clear_memory()


def test_nvrtc_is_the_pinned_wheel() -> None:
    major, minor = cuda_jit.nvrtc_version()
    assert f"{major}.{minor}" == ".".join(_pin("nvidia-cuda-nvrtc").split(".")[:2]) == "13.0"
    assert 90 in cuda_jit.supported_archs()


def test_cuda_fuser_is_registered() -> None:
    assert jit.get_fuser("cuda") is cuda_jit.fuser
    assert "cuda" in jit.registered_fusers()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("fn", "num_inputs"), [CHAIN, SUM], ids=["elementwise", "sum"])
def test_generated_source_compiles_for_sm_90(cache: Path, fn, num_inputs: int, dtype: str) -> None:
    graph = _graph(fn, num_inputs, dtype)
    source = cuda_jit.emit_cuda_source(graph)
    assert jit.emit_body(graph) in source  # core's expression body, unchanged
    assert '#include "aten/native/ElementwiseMath.h"' in source
    compiled = cuda_jit.compile_graph(graph, "sm_90")
    ptx = compiled.ptx.decode()
    assert re.search(r"^\.target sm_90\b", ptx, re.MULTILINE), ptx[:400]
    assert f".visible .entry {graph.kernel_name}(" in ptx
    # One pointer per input, the output pointer and the element count.
    params = re.findall(rf"\.param \.u64 \w*{graph.kernel_name}_param_\d+", ptx)
    assert len(params) == num_inputs + 2
    assert compiled.cubin[:4] == b"\x7fELF"  # a real sm_90 image: no JIT at load
    assert compiled.image == compiled.cubin


def test_ptx_only_target_for_gpus_newer_than_nvrtc(cache: Path) -> None:
    assert cuda_jit.target_for(90) == "sm_90"
    newest = max(cuda_jit.supported_archs())
    assert cuda_jit.target_for(newest + 100) == f"compute_{newest}"
    compiled = cuda_jit.compile_graph(_graph(*CHAIN, "float32"), f"compute_{newest}")
    assert compiled.cubin == b""
    assert compiled.image.endswith(b"\0")  # cuModuleLoadData wants NUL-terminated PTX


def test_second_compile_hits_the_cache(cache: Path) -> None:
    graph = _graph(*CHAIN, "float32")
    first = cuda_jit.compile_graph(graph, "sm_90")
    assert jit.stats()["compilations"] == 1
    assert cuda_jit.compile_graph(graph, "sm_90") == first
    assert jit.stats()["memory_hits"] == 1
    # Another process (here: a forgetful cache) reads the files, no NVRTC run.
    cuda_jit.nvrtc_cache().clear_memory()
    assert cuda_jit.compile_graph(graph, "sm_90") == first
    assert jit.stats()["disk_hits"] == 1 and jit.stats()["compilations"] == 1
    names = sorted(p.name for p in cache.iterdir())
    assert names == [f"{first.key}.cu", f"{first.key}.cubin", f"{first.key}.ptx"]  # no temp files
    # Another architecture is another key.
    assert cuda_jit.compile_graph(graph, "sm_80").key != first.key
    assert jit.stats()["compilations"] == 2


def test_compile_error_carries_nvrtc_log(cache: Path) -> None:
    # The expression passes KernelSource's token check but is not valid CUDA C.
    with pytest.raises(cuda_jit.NvrtcError) as info:
        cuda_jit.compile_elementwise("bad_kernel", 2, "expf(in0, in1)", "sm_90")
    message = str(info.value)
    assert "NVRTC could not compile bad_kernel.cu (NVRTC_ERROR_COMPILATION" in message
    assert "too many arguments in function call" in message
    assert "--gpu-architecture=sm_90" in message
    assert not any(cache.glob("*.ptx"))  # nothing cached for a failed compile


def test_injected_text_never_reaches_nvrtc() -> None:
    with pytest.raises(ValueError, match="unexpected character ';'"):
        cuda_jit.compile_elementwise("k", 1, "in0; system", "sm_90")
    with pytest.raises(ValueError, match="'system', which is neither an input"):
        cuda_jit.compile_elementwise("k", 1, "system(in0)", "sm_90")


def test_elementwise_kernel_source_compiles(cache: Path) -> None:
    compiled = cuda_jit.compile_elementwise("axpy", 2, "2.0f * in0 + fmaxf(in1, 0.0f)", "sm_90")
    assert ".visible .entry axpy(" in compiled.ptx.decode()


def test_fuser_registers_a_dispatcher_op_for_an_explicit_arch(cache: Path) -> None:
    graph = _graph(*CHAIN, "float64")
    kernel = cuda_jit.NvrtcFuser(archs=[90]).compile(graph)
    assert isinstance(kernel, jit.DispatchedKernel)
    assert kernel.name == graph.kernel_name


@pytest.mark.skipif(torch_cuda.device_count() > 0, reason="checks the no-device behaviour")
def test_fuser_without_a_device_declines_with_a_warning(cache: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cuda_jit.NvrtcFuser().compile(_graph(*SUM, "float32")) is None
    assert any("no CUDA device to compile for" in str(w.message) for w in caught)
