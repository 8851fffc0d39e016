"""The conformance suite: every capability file runs once per backend.

Backends are the CPU, the test-only "fake" extension and every package under
third_device/ with a ``testing`` module (``<package>.testing.ADAPTER``, see
torch_core.testing): a new backend is tested the moment it exists, with no
list to edit. ``TORCHSPLIT_CONFORMANCE_BACKENDS=torch_emu,cpu`` narrows the
run (each backend's Bazel ``:conformance_test`` sets it to itself).

At the end pytest prints the capability x backend table.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import torch_core as tc
from builds import REPO, import_fake_device
from torch_core.testing import CAPABILITIES, BackendAdapter, adapter_for

BACKENDS_ENV = "TORCHSPLIT_CONFORMANCE_BACKENDS"


def _fake_adapter() -> BackendAdapter:
    only = "the test-only fake backend has kernels for add, fill and copy only"
    return BackendAdapter(
        device_type="fake",
        package="_fake_device",
        asynchronous=False,
        unsupported={
            **{f"ops.{op}": only for op in _NON_FAKE_OPS},
            "streams.block": "fake runs every kernel before the call returns: nothing to hold",
            "profiler": "fake registers no profiler stubs",
            "fusion": "fake registers no fuser and lacks the ops a fused graph uses",
            "distributed": "fake registers no process-group backend",
        },
    )


_NON_FAKE_OPS = "sub mul div neg relu exp tanh sum max mean softmax matmul".split()


def backend_packages() -> list[str]:
    """cpu, fake, then third_device/<pkg>/<pkg>/testing.py, or the environment's list."""
    chosen = os.environ.get(BACKENDS_ENV, "")
    if chosen:
        return [name.strip() for name in chosen.split(",") if name.strip()]
    found = sorted(
        path.parent.name
        for path in (REPO / "third_device").glob("*/*/testing.py")
        if path.parent.name == path.parent.parent.name
    )
    return ["cpu", "fake", *found]


def _short(package: str) -> str:
    return package.removeprefix("torch_")


# Backends whose device is a GPU: their cases carry the `gpu` marker, so
# `pytest -m gpu` (tools/dev gpu-check) runs the suite on cuda:0 as well.
GPU_BACKENDS = frozenset({"torch_cuda"})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        params = [
            pytest.param(p, id=_short(p), marks=[pytest.mark.gpu] if p in GPU_BACKENDS else [])
            for p in backend_packages()
        ]
        metafunc.parametrize("backend", params, indirect=True)


_ADAPTERS: dict[str, BackendAdapter] = {}


def _not_built(package: str) -> str | None:
    """Why ``package`` cannot be tested here: no compiled extension in it on sys.path.

    tools/dev build skips a backend this machine or these flags cannot build
    (torch_cuda without a toolkit, or with --config=cpu-only) and says why; its
    conformance column then skips with this reason. A backend whose extension
    exists but fails to import still fails.
    """
    for entry in sys.path:
        if entry and any((Path(entry) / package).glob("*.so")):
            return None
    return (
        f"{package} is not built here (no compiled extension in the package on sys.path): "
        "tools/dev build builds every backend it can and names each one it skips, and why"
    )


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> BackendAdapter:
    """The backend under test; skips (with the backend's reason) when it has no device."""
    package = request.param
    if package not in _ADAPTERS:
        # An import error is a failure, not a skip: a broken backend must not pass.
        if package == "fake":
            import_fake_device()  # a missing build names the target to build
            adapter = _fake_adapter()
        else:
            why = None if package in ("cpu", "torch_core") else _not_built(package)
            if why:
                pytest.skip(why)
            adapter = adapter_for(package)
        adapter.load()
        _ADAPTERS[package] = adapter
    adapter = _ADAPTERS[package]
    if not adapter.is_available():
        try:
            tc._C.check_usable(tc.device(adapter.device(0)))
            reason = "not available"
        except RuntimeError as error:
            reason = str(error)
        pytest.skip(f"{adapter.device_type}: {reason}")
    capability = Path(str(request.node.fspath)).stem.removeprefix("test_")
    why = adapter.lacks(capability)
    if why:
        pytest.skip(f"{adapter.device_type} lacks {capability}: {why}")
    return adapter


def need(backend: BackendAdapter, capability: str) -> None:
    """Skips the test when ``backend`` declares ``capability`` unsupported."""
    why = backend.lacks(capability)
    if why:
        pytest.skip(f"{backend.device_type} lacks {capability}: {why}")


# ---- the capability x backend table ------------------------------------------------

_TABLE: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
_REASONS: dict[tuple[str, str], str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "conformance/" not in report.nodeid.replace(os.sep, "/") or "[" not in report.nodeid:
        return
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    capability = Path(report.nodeid.split("::")[0]).stem.removeprefix("test_")
    params = report.nodeid.rsplit("[", 1)[1].rstrip("]").split("-")
    backend = next((p for p in params if p in _backend_ids()), params[-1])
    key = (capability, backend)
    _TABLE[key][report.outcome] += 1
    if report.skipped and isinstance(report.longrepr, tuple):
        _REASONS.setdefault(key, report.longrepr[2].removeprefix("Skipped: "))


def _backend_ids() -> list[str]:
    return [_short(p) for p in backend_packages()]


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not _TABLE:
        return
    backends = [b for b in _backend_ids() if any(k[1] == b for k in _TABLE)]
    write = terminalreporter.write_line
    terminalreporter.section("conformance: capability x backend")
    write(f"{'capability':<12}" + "".join(f" {b:<17}" for b in backends))
    for capability in CAPABILITIES:
        cells = []
        for b in backends:
            counts = _TABLE.get((capability, b), {})
            passed, failed, skipped = (counts.get(k, 0) for k in ("passed", "failed", "skipped"))
            if failed:
                cell = f"FAIL {failed}/{passed + failed + skipped}"
            elif passed:
                cell = f"pass {passed}" + (f" skip {skipped}" if skipped else "")
            elif skipped:
                cell = f"skip {skipped}"
            else:
                cell = "-"
            cells.append(f" {cell:<17}")
        write(f"{capability:<12}" + "".join(cells))
    whole = {k: v for k, v in _REASONS.items() if not _TABLE[k].get("passed")}
    for b in backends:
        reasons = {c: r for (c, bb), r in whole.items() if bb == b}
        if len(reasons) == len(CAPABILITIES) and len(set(reasons.values())) == 1:
            write(f"  {b}: every capability skipped: {next(iter(reasons.values()))}")
            continue
        for capability, reason in sorted(reasons.items()):
            write(f"  {b} {capability}: {reason}")
