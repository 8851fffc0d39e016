"""The CPU's kernels: each capability level and the BLAS agree with the fallback.

Every level the CPU supports (TORCH_CORE_CPU_CAPABILITY, each in its own
process: the level is chosen once per process) runs the same ops on the same
inputs as the fallback -- the baseline build with the BLAS off
(TORCH_CORE_BLAS=0, matmul through the blocked kernels) -- and the results must
agree within float tolerances, and with NumPy. Not timed: bench/bench_ops.py
measures speed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import torch_core as tc

LEVELS = ["default", "avx2", "avx512"]
SUPPORTED = tc.config()["cpu_capabilities_supported"]

# Runs the ops and saves every result (and the config it ran with) to argv[1].
OPS = r"""
import sys
import numpy as np
import torch_core as tc

rng = np.random.default_rng(7)
out = {"capability": np.array(tc.config()["cpu_capability"]),
       "blas": np.array(tc.config()["blas_enabled"])}
for dt in (np.float32, np.float64):
    name = np.dtype(dt).name
    v = rng.standard_normal(1003).astype(dt)  # not a whole number of vectors
    w = rng.standard_normal(1003).astype(dt)
    g = (rng.standard_normal((37, 61)) * 5).astype(dt)
    col, row = rng.standard_normal((37, 1)).astype(dt), rng.standard_normal(61).astype(dt)
    big = rng.random(100_003).astype(dt)
    tv, tw, tg = tc.tensor(v), tc.tensor(w), tc.tensor(g)
    for op in ("add", "sub", "mul", "div"):
        out[f"{op}_{name}"] = getattr(tc, op)(tv, tw).numpy()
        out[f"{op}_bcast_{name}"] = getattr(tc, op)(tc.tensor(col), tc.tensor(row)).numpy()
    out[f"scalar_{name}"] = (tg * 2.5 - 1).numpy()
    extremes = [0, -0.0, 1e-30, 88.7, 89, -103, -104, 700, -750, np.inf, -np.inf, np.nan]
    extremes = np.array(extremes, dt)
    for op in ("neg", "relu", "exp", "tanh"):
        out[f"{op}_{name}"] = getattr(tg, op)().numpy()
        out[f"{op}_extremes_{name}"] = getattr(tc.tensor(extremes), op)().numpy()
    tb = tc.tensor(big)
    out[f"sum_{name}"] = tb.sum().numpy()
    out[f"sum_rows_{name}"] = tg.sum(1).numpy()
    out[f"sum_cols_{name}"] = tg.sum(0).numpy()
    out[f"max_{name}"] = tb.max().numpy()
    out[f"max_cols_{name}"] = tg.max(0).numpy()
    nan = g.copy()
    nan[3, 5] = np.nan
    out[f"max_nan_{name}"] = tc.tensor(nan).max(1).numpy()
    out[f"softmax_rows_{name}"] = tg.softmax(1).numpy()
    out[f"softmax_cols_{name}"] = tg.softmax(0).numpy()
    a, b = rng.standard_normal((67, 45)).astype(dt), rng.standard_normal((45, 83)).astype(dt)
    out[f"matmul_{name}"] = (tc.tensor(a) @ tc.tensor(b)).numpy()
    ab = rng.standard_normal((3, 17, 45)).astype(dt)
    out[f"matmul_batched_{name}"] = (tc.tensor(ab) @ tc.tensor(b)).numpy()
ia, ib = rng.integers(-50, 50, (33, 21)), rng.integers(-50, 50, (21, 19))
out["matmul_int64"] = (tc.tensor(ia) @ tc.tensor(ib)).numpy()
out["add_int64"] = (tc.tensor(ia) + tc.tensor(ia[0])).numpy()
out["sum_int64"] = tc.tensor(ia).sum(0).numpy()
np.savez(sys.argv[1], **out)
"""


def _run_ops(path: Path, capability: str, blas: str) -> dict[str, np.ndarray]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "TORCH_CORE_NO_AUTOLOAD": "1",
        "TORCH_CORE_CPU_CAPABILITY": capability,
        "TORCH_CORE_BLAS": blas,
    }
    proc = subprocess.run(
        [sys.executable, "-c", OPS, str(path)], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with np.load(path) as results:
        return dict(results)


@pytest.fixture(scope="module")
def fallback(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """The baseline build with the BLAS off: what every other path must match."""
    results = _run_ops(tmp_path_factory.mktemp("fallback") / "r.npz", "default", "0")
    assert str(results["capability"]) == "default" and not bool(results["blas"])
    return results


def _tolerance(name: str) -> tuple[float, float]:
    if name.endswith("int64"):
        return 0.0, 0.0
    if name.endswith("float64"):
        return 1e-12, 1e-12
    # float32: FMA contraction and summation order differ between builds (the
    # conformance suite's tolerance).
    return 1e-5, 1e-5


@pytest.mark.parametrize("blas", ["1", "0"], ids=["blas", "blocked"])
@pytest.mark.parametrize("level", LEVELS)
def test_level_agrees_with_the_fallback(
    fallback: dict[str, np.ndarray], tmp_path: Path, level: str, blas: str
) -> None:
    if level not in SUPPORTED:
        pytest.skip(f"this CPU lacks {level} (it supports {', '.join(SUPPORTED)})")
    results = _run_ops(tmp_path / "r.npz", level, blas)
    assert str(results["capability"]) == level
    assert bool(results["blas"]) == (blas == "1")
    for name, want in fallback.items():
        if name in ("capability", "blas"):
            continue
        rtol, atol = _tolerance(name)
        np.testing.assert_allclose(results[name], want, rtol=rtol, atol=atol, err_msg=name)


def test_fallback_agrees_with_numpy(fallback: dict[str, np.ndarray]) -> None:
    """Spot checks of the fallback itself (the conformance suite covers the rest)."""
    rng = np.random.default_rng(7)
    v = rng.standard_normal(1003).astype(np.float32)
    w = rng.standard_normal(1003).astype(np.float32)
    np.testing.assert_allclose(fallback["add_float32"], v + w, rtol=1e-6)
    extremes = fallback["exp_extremes_float32"]
    assert extremes[9] == np.inf and extremes[10] == 0 and np.isnan(extremes[11])
    assert 0 < extremes[5] < 1e-44  # exp(-103): a subnormal, not flushed to zero
    assert np.isnan(fallback["max_nan_float32"][3]) and not np.isnan(fallback["max_nan_float32"][4])


def test_config_and_thread_count() -> None:
    config = tc.config()
    assert config["cpu_capability"] in config["cpu_capabilities_supported"]
    assert config["cpu_capabilities_supported"][0] == "default"
    assert config["blas"] and config["blas_enabled"] is True
    before = tc.get_num_threads()
    try:
        tc.set_num_threads(1)
        assert tc.get_num_threads() == 1 and tc.config()["num_threads"] == 1
    finally:
        tc.set_num_threads(before)
    with pytest.raises(ValueError, match="expected a positive number of threads, got 0"):
        tc.set_num_threads(0)
    with pytest.raises(TypeError, match="expected an int"):
        tc.set_num_threads("2")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TORCH_CORE_CPU_CAPABILITY": "avx1024"}, "avx1024 is not a CPU capability"),
        ({"TORCH_CORE_BLAS": "maybe"}, "TORCH_CORE_BLAS=maybe: expected 0"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], message: str) -> None:
    code = "import torch_core as tc; tc.ones(2, 2) @ tc.ones(2, 2); print(tc.config())"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "ValueError" in proc.stderr and message in proc.stderr, proc.stderr[-2000:]


def test_a_level_the_cpu_lacks_is_refused() -> None:
    missing = [level for level in LEVELS if level not in SUPPORTED]
    if not missing:
        pytest.skip("this CPU supports every level")
    proc = subprocess.run(
        [sys.executable, "-c", "import torch_core as tc; tc.ones(2) + 1"],
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(sys.path),
            "TORCH_CORE_CPU_CAPABILITY": missing[-1],
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "this CPU does not support" in proc.stderr


def _libtorch_core() -> Path:
    for line in Path("/proc/self/maps").read_text().splitlines():
        if line.endswith("libtorch_core.so"):
            return Path(line.split()[-1])
    raise AssertionError("libtorch_core.so is not loaded")


# Instructions a baseline x86-64 CPU cannot run: VEX/EVEX-encoded ones (v...)
# and any that name a 256- or 512-bit register.
WIDE = re.compile(r"^\s*[0-9a-f]+:\s+(v[a-z0-9]+|\S+\s+.*%[yz]mm)", re.MULTILINE)


def test_wide_instructions_stay_in_their_capability() -> None:
    """No AVX code outside the AVX2/AVX-512 builds of the kernels: the library
    must run on any x86-64 CPU (a shared inline function compiled with AVX-512
    and kept by the linker would crash an older CPU)."""
    proc = subprocess.run(
        ["objdump", "-d", "-C", "--no-show-raw-insn", str(_libtorch_core())],
        capture_output=True,
        text=True,
        check=True,
    )
    functions = re.split(r"\n(?=[0-9a-f]+ <)", proc.stdout)
    assert len(functions) > 100, "no symbols: is libtorch_core.so stripped?"
    offenders, confined = [], 0
    for body in functions:
        name = body.split("\n", 1)[0]
        if not WIDE.search(body):
            continue
        if "at::native::AVX2::" in name or "at::native::AVX512::" in name:
            confined += 1
        else:
            offenders.append(name)
    assert offenders == [], offenders[:10]
    assert confined > 10  # the AVX builds are there, and vectorised
