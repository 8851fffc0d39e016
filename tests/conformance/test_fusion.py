"""fusion: a fused graph on the backend's device equals the eager ops it replaces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import torch_core as tc
from torch_core import jit
from torch_core.testing import BackendAdapter


@pytest.fixture(autouse=True)
def _jit_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path_factory.getbasetemp() / "jit-cache"
    monkeypatch.setenv(jit.CACHE_ENV, str(directory))
    monkeypatch.delenv(jit.COMPILER_ENV, raising=False)
    jit.reset_stats()
    return directory


def chain(a, b, c):
    return (a * b + c).relu() * 0.5 - a.exp().tanh()


def reduced(a, b):
    return (a * b - 0.5).tanh().sum()


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize(("fn", "arity"), [(chain, 3), (reduced, 2)], ids=["chain", "reduced"])
def test_fused_equals_eager(backend: BackendAdapter, fn, arity: int, np_dtype: type) -> None:
    rng = np.random.default_rng(11)
    args = [
        tc.tensor(rng.standard_normal(4099).astype(np_dtype), device=backend.device(0))
        for _ in range(arity)
    ]
    fused = jit.fuse(fn)
    assert jit.get_fuser(backend.device_type) is not None
    assert fused.explain(*args).startswith("fused as fused_")
    got, want = fused(*args), fn(*args)
    assert str(got.device) == backend.device(0) and got.dtype == want.dtype
    tol = 1e-6 if np_dtype is np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    assert jit.stats()["fused_calls"] == 1
