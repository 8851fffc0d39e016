"""torch_core.jit: fused results equal eager ones; guards, the kernel cache,
fallbacks, and the emu launch as one queued kernel.

Compiler runs are counted with jit.stats(), never timed. Tests that need a
compilation of their own use a graph no other test builds (a distinct
constant), since kernels stay loaded for the life of the process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import torch_core as tc
import torch_emu
from builds import import_fake_device
from torch_core import jit
from torch_emu import _EMUC

import_fake_device()  # registers the test-only "fake" device type

DEVICES = ["cpu", "emu:0"]
DTYPES = [np.float32, np.float64]


@pytest.fixture(autouse=True)
def _jit_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One cache directory for the module (never the user's), fresh counters per test."""
    directory = tmp_path_factory.getbasetemp() / "jit-cache"
    monkeypatch.setenv(jit.CACHE_ENV, str(directory))
    monkeypatch.delenv(jit.COMPILER_ENV, raising=False)
    jit.reset_stats()
    return directory


def _inputs(count: int, dtype: type, device: str, n: int = 1000, seed: int = 0) -> list[tc.Tensor]:
    rng = np.random.default_rng(seed)
    return [tc.tensor(rng.standard_normal(n).astype(dtype), device=device) for _ in range(count)]


def chain(a, b, c, d, e):
    return (a * b + c).relu() * d - e


def mixed(a, b):
    return (2.5 - a).exp() / (1 + b.tanh() * b) + (-a).relu() * 3


def reduced(a, b):
    return (a * b - 0.5).tanh().sum()


def _close(fused: tc.Tensor, eager: tc.Tensor, dtype: type) -> None:
    assert fused.dtype == eager.dtype
    assert tuple(fused.shape) == tuple(eager.shape)
    assert str(fused.device) == str(eager.device)
    rtol = 1e-6 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(fused.numpy(), eager.numpy(), rtol=rtol, atol=rtol)


# -- fused == eager ----------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("fn", "arity"), [(chain, 5), (mixed, 2), (reduced, 2)])
def test_fused_equals_eager(fn, arity: int, dtype: type, device: str) -> None:
    fused = jit.fuse(fn)
    args = _inputs(arity, dtype, device, n=4099)
    assert fused.explain(*args).startswith("fused as fused_")
    _close(fused(*args), fn(*args), dtype)
    assert jit.stats()["fused_calls"] == 1


def test_fused_result_is_bitwise_eager_for_the_chain() -> None:
    # No FMA contraction and the same math header: not just close, identical.
    args = _inputs(5, np.float32, "cpu", n=10_000, seed=3)
    assert jit.fuse(chain)(*args).numpy().tobytes() == chain(*args).numpy().tobytes()


def test_fused_keeps_nonfinite_values_like_eager() -> None:
    a = tc.tensor(np.array([np.nan, np.inf, -np.inf, -0.0, 1.0], dtype=np.float32))
    b = tc.tensor(np.array([1.0, -1.0, 2.0, 3.0, 0.0], dtype=np.float32))
    fn = jit.fuse(lambda x, y: (x / y).relu() + x * float("inf"))
    np.testing.assert_array_equal(fn(a, b).numpy(), ((a / b).relu() + a * float("inf")).numpy())


def test_python_number_arguments_are_constants_guarded_by_value() -> None:
    fused = jit.fuse(lambda x, k: x * k + k)
    x = _inputs(1, np.float64, "cpu")[0]
    _close(fused(x, 2.0), x * 2.0 + 2.0, np.float64)
    _close(fused(x, 3.0), x * 3.0 + 3.0, np.float64)
    assert len(fused.graphs) == 2  # one trace per value


# -- guards ------------------------------------------------------------------------


def test_guards_retrace_on_dtype_shape_and_device_change() -> None:
    fused = jit.fuse(lambda a, b: (a - b) * 0.125 + a.exp())
    fused(*_inputs(2, np.float32, "cpu", n=100))
    assert jit.stats()["traces"] == 1
    assert jit.stats()["compilations"] == 1

    fused(*_inputs(2, np.float32, "cpu", n=100, seed=1))  # same guards: no retrace
    assert jit.stats()["traces"] == 1

    fused(*_inputs(2, np.float32, "cpu", n=257))  # shape: retrace, same kernel
    assert (jit.stats()["traces"], jit.stats()["compilations"]) == (2, 1)

    fused(*_inputs(2, np.float32, "emu:0", n=257))  # device: retrace; emu shares the host code
    assert (jit.stats()["traces"], jit.stats()["compilations"]) == (3, 1)

    fused(*_inputs(2, np.float64, "cpu", n=257))  # dtype: a new kernel
    assert (jit.stats()["traces"], jit.stats()["compilations"]) == (4, 2)
    assert jit.stats()["fused_calls"] == 5
    assert [g.dtype for g in fused.graphs].count("float64") == 1


# -- the kernel cache --------------------------------------------------------------


def test_two_fuse_objects_with_one_graph_compile_once(_jit_cache: Path) -> None:
    def first(a, b):
        return a * b + 0.0625

    def second(x, y):  # another function, the same graph
        return x * y + 0.0625

    args = _inputs(2, np.float32, "cpu")
    first_fused, second_fused = jit.fuse(first), jit.fuse(second)
    _close(first_fused(*args), first(*args), np.float32)
    _close(second_fused(*args), second(*args), np.float32)
    assert first_fused.graphs[0].kernel_name == second_fused.graphs[0].kernel_name
    assert jit.stats()["compilations"] == 1
    assert jit.stats()["memory_hits"] == 1

    # A process that lost its memory of the kernel finds it on disk.
    jit.kernel_cache().clear_memory()
    _close(jit.fuse(first)(*args), first(*args), np.float32)
    assert (jit.stats()["compilations"], jit.stats()["disk_hits"]) == (1, 1)

    # The cache holds the object and its source, and no leftovers of the build.
    name = first_fused.graphs[0].kernel_name
    sources = [p for p in _jit_cache.glob("*.cpp") if name in p.read_text()]
    assert len(sources) == 1
    assert sources[0].with_suffix(".so").is_file()
    assert not [p for p in _jit_cache.iterdir() if p.name.startswith(".")]


def test_another_process_reuses_the_disk_cache(_jit_cache: Path) -> None:
    script = (
        "import numpy as np, torch_core as tc\n"
        "from torch_core import jit\n"
        "x = tc.tensor(np.arange(8, dtype=np.float64))\n"
        "r = jit.fuse(lambda a: (a * 0.03125).tanh())(x)\n"
        "print(jit.stats()['compilations'], jit.stats()['disk_hits'], float(r.numpy()[7]))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), TORCH_CORE_NO_AUTOLOAD="1")
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][:2] in (["1", "0"], ["0", "1"])  # compiled, unless an earlier run did
    assert runs[1][:2] == ["0", "1"]
    assert float(runs[1][2]) == pytest.approx(np.tanh(7 * 0.03125))


# -- fallbacks -----------------------------------------------------------------------


def test_no_compiler_runs_eagerly_with_exactly_one_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(jit.COMPILER_ENV, str(tmp_path / "no-such-c++"))
    args = _inputs(5, np.float32, "cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [jit.fuse(chain)(*args) for _ in range(2)]  # two fuse objects
        again = jit.fuse(chain)
        results += [again(*args), again(*args)]
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1, messages
    assert "no-such-c++" in messages[0] and "eagerly" in messages[0]
    for result in results:
        assert result.numpy().tobytes() == chain(*args).numpy().tobytes()
    assert jit.stats()["compilations"] == 0
    assert jit.stats()["fused_calls"] == 0
    assert jit.stats()["eager_calls"] == 4


def test_device_without_a_fuser_runs_eagerly() -> None:
    assert jit.get_fuser("fake") is None
    assert {"cpu", "emu"} <= set(jit.registered_fusers())
    data = np.arange(6, dtype=np.float32)
    a, b = tc.tensor(data, device="fake:0"), tc.tensor(data * 2, device="fake:0")
    fused = jit.fuse(lambda x, y: x + y)
    assert fused.explain(a, b) == "eager: device type 'fake' has no fuser"
    np.testing.assert_array_equal(fused(a, b).numpy(), data * 3)
    assert jit.stats()["traces"] == 0


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (lambda: [tc.ones(4), tc.ones(2, 4)], "different shapes"),
        (lambda: [tc.ones(4), tc.ones(4, dtype=tc.float64)], "different dtypes"),
        (lambda: [tc.ones(4), tc.ones(4, device="emu:0")], "different devices"),
        (lambda: [tc.ones(4, dtype=tc.int64), tc.ones(4, dtype=tc.int64)], "not fusible"),
    ],
)
def test_unfusible_arguments_run_eagerly(args, reason: str) -> None:
    fused = jit.fuse(lambda x, y: x * y)
    values = args()
    assert reason in fused.explain(*values)
    if "devices" not in reason:
        np.testing.assert_array_equal(fused(*values).numpy(), (values[0] * values[1]).numpy())


def test_untraceable_function_runs_eagerly_with_a_warning() -> None:
    x = tc.ones(3, 3)
    fused = jit.fuse(lambda a: (a @ a).relu())
    with pytest.warns(RuntimeWarning, match="'matmul' is not a fusible op"):
        np.testing.assert_array_equal(fused(x).numpy(), np.full((3, 3), 3.0, np.float32))
    assert fused.explain(x).startswith("eager:")


# -- emu: one kernel on the stream ---------------------------------------------------


def _wait_until_started(device: int, stream: int) -> None:
    # The gate kernel leaves the queue when the worker starts it; poll, no timing.
    while _EMUC._queued_tasks(device, stream) != 0:
        os.sched_yield()


@pytest.mark.asynchronous
def test_emu_fused_launch_is_one_queued_kernel() -> None:
    args = _inputs(5, np.float32, "emu:0")
    fused = jit.fuse(chain)
    fused(*args)  # trace and compile outside the measurement
    s = torch_emu.Stream(0)
    gate = _EMUC._block_stream(0, s.id)
    _wait_until_started(0, s.id)
    with tc.stream(s):
        out = fused(*args)
        fused_tasks = _EMUC._queued_tasks(0, s.id)
        eager = chain(*args)
        eager_tasks = _EMUC._queued_tasks(0, s.id) - fused_tasks
    assert fused_tasks == 1
    assert eager_tasks == 5
    gate.open()
    s.synchronize()
    assert out.numpy().tobytes() == eager.numpy().tobytes()


def test_fused_kernels_are_named_dispatcher_ops() -> None:
    # What the profiler observes: one op per fused launch, named after the graph.
    fused = jit.fuse(chain)
    for device in DEVICES:
        fused(*_inputs(5, np.float64, device))
    name = fused.graphs[0].kernel_name
    assert name in tc._C.kernel_ops("cpu")
    assert name in tc._C.kernel_ops("emu")


@pytest.mark.parametrize("device", DEVICES)
def test_profiler_sees_one_fused_kernel(device: str) -> None:
    from torch_core.profiler import ProfilerActivity, profile

    args = _inputs(5, np.float32, device)
    fused = jit.fuse(chain)
    fused(*args)  # trace and compile outside the profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.DEVICE]) as prof:
        fused(*args)
        tc.synchronize(device)
    assert [e.name for e in prof.events] == [fused.graphs[0].kernel_name]
    event = prof.events[0]
    assert event.device == device
    assert event.input_shapes == ((1000,),) * 5
    if device != "cpu":
        assert event.device_start_ns >= 0  # timed on the emu stream by its profiler stubs
