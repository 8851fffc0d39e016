"""torch_cuda.jit on a GPU: fused kernels compiled by NVRTC for the device's
architecture, launched with the driver API on the current stream. Skipped
without a CUDA device (tests/conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
import torch_cuda
from torch_core import jit
from torch_cuda import jit as cuda_jit

pytestmark = pytest.mark.gpu


@pytest.fixture
def cache(tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path))
    cuda_jit.nvrtc_cache().clear_memory()
    jit.reset_stats()
    yield tmp_path


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 1000, 1_000_003])
def test_fused_chain_matches_numpy(cache, dtype, n: int) -> None:
    rng = np.random.default_rng(n)
    host = [rng.standard_normal(n).astype(dtype) for _ in range(3)]
    args = [tc.tensor(h, device="cuda:0") for h in host]

    @jit.fuse
    def f(a, b, c):
        return ((a * b + c).relu() - 0.5).tanh() * a

    out = f(*args)
    assert f.explain(*args).startswith("fused as fused_")
    a, b, c = host
    want = (np.tanh(np.maximum(a * b + c, 0) - dtype(0.5)) * a).astype(dtype)
    # tanh is CUDA's, not the host libm's: a few ulps apart.
    rtol = 1e-6 if dtype is np.float32 else 1e-14
    np.testing.assert_allclose(out.numpy(), want, rtol=rtol, atol=rtol)
    assert jit.stats()["fused_calls"] == 1
    assert out.device == tc.device("cuda:0") and out.shape == args[0].shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_sum_matches_numpy(cache, dtype) -> None:
    host = (np.arange(100_003) % 17).astype(dtype)
    x = tc.tensor(host, device="cuda:0")
    f = jit.fuse(lambda a: (a * 2.0 + 1.0).sum())
    total = f(x)
    assert total.shape == ()
    # Small integers: the sum is exact in double whatever the order.
    assert float(total.numpy()) == float((host * 2 + 1).sum(dtype=np.float64))


def test_kernel_is_compiled_for_the_device_arch(cache) -> None:
    arch = torch_cuda._CUDAC._device_arch(0)
    assert cuda_jit.fuser.archs()[0] >= 75 and arch in cuda_jit.fuser.archs()
    f = jit.fuse(lambda a, b: a * b + b)
    x = tc.tensor(np.ones(10, np.float32), device="cuda:0")
    f(x, x)
    expected = "cubin" if f"sm_{arch}" == cuda_jit.target_for(arch) else "ptx"
    assert any(p.suffix == f".{expected}" for p in (cache / "nvrtc").iterdir())
