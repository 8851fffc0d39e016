"""Shared test setup: where the repository and Bazel's outputs are, and imports.

The Python packages are split between the source tree (``.py``) and Bazel's
output tree (the compiled extensions); both directories go on sys.path and the
packages merge them (pkgutil.extend_path). ``tools/dev test`` builds first.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# tests/ itself, for `builds`. Not resolved: under `bazel test` this file is a symlink
# into the source tree, and the test reads its runfiles (or its copy of the checkout),
# never the source tree.
if str(Path(__file__).absolute().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).absolute().parent))

from builds import NO_CUDA_BUILD, REPO, Bazel, cuda_extension_built

BAZEL_BIN = REPO / "bazel-bin"
# Core and every backend package under third_device/ (found, not listed: a new
# backend needs no edit here).
PACKAGE_ROOTS = [
    "core",
    *sorted(str(path.relative_to(REPO)) for path in REPO.glob("third_device/*") if path.is_dir()),
]

# Test-only extensions (tests/backends/_fake_device.so): in bazel-bin for a
# source checkout, beside this file in Bazel's runfiles.
for base in (BAZEL_BIN, REPO):
    sys.path.insert(0, str(base / "tests" / "backends"))

# The torchsplit tools (harnesses shared by tests and the CLI).
if str(REPO / "tools" / "python") not in sys.path:
    sys.path.insert(0, str(REPO / "tools" / "python"))

for root in PACKAGE_ROOTS:
    for base in (REPO, BAZEL_BIN):
        entry = str(base / root)
        if entry not in sys.path:
            sys.path.insert(0, entry)


def _layering_guard() -> object | None:
    """A layer's code coupling to another at run time fails the session (docs/layering.md):
    in this process, and in every Python process a test starts (the start-up hook that
    tools/dev bootstrap installs reads TORCHSPLIT_LAYERING_GUARD; those processes append
    what they catch to TORCHSPLIT_LAYERING_LOG, read at the end of the session)."""
    try:
        from torchsplit.audit.runtime import GUARD_ENV, LOG_ENV, install_for_checkout
    except ImportError:  # a Bazel test's runfiles without //tools/python:layering_guard
        return None
    # This session's own log: a pytest run inside a test (the mutation harness's) has its
    # own session and its own verdict.
    fd, log = tempfile.mkstemp(prefix="torchsplit-layering-", suffix=".log")
    os.close(fd)
    os.environ[LOG_ENV] = log
    os.environ[GUARD_ENV] = str(REPO)
    return install_for_checkout(REPO, BAZEL_BIN)


LAYERING_GUARD = _layering_guard()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if LAYERING_GUARD is None:
        return
    found = list(LAYERING_GUARD.violations)  # type: ignore[attr-defined]
    log = Path(os.environ.get("TORCHSPLIT_LAYERING_LOG", ""))
    if log.name and log.is_file():
        found += log.read_text(encoding="utf-8").splitlines()
        log.unlink()
    found = list(dict.fromkeys(found))
    for message in found:
        print(f"\nLAYERING RUNTIME: {message}", file=sys.stderr)
    if found:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def bazel() -> Bazel:
    if shutil.which("bazel-4") is None and not Path("/usr/bin/bazel-4").exists():
        pytest.fail("Bazel 4.2.3 is not installed: run tools/dev bootstrap")
    return Bazel()


def _cuda_device_count() -> int:
    if not cuda_extension_built():
        return 0
    import torch_cuda

    return torch_cuda.device_count()


def _gpu_required() -> bool:
    """TORCH_CUDA_REQUIRE_GPU=1: on a GPU machine, a missing or unusable device
    (e.g. a driver older than the CUDA runtime needs) fails the run instead of
    skipping every GPU test and looking green."""
    return os.environ.get("TORCH_CUDA_REQUIRE_GPU", "") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` need a CUDA device: skip them cleanly when there is
    none, or stop the run when TORCH_CUDA_REQUIRE_GPU=1."""
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    count = _cuda_device_count()
    if count > 0:
        return
    if cuda_extension_built():
        import torch_cuda

        reason = f"needs a CUDA device: {torch_cuda._CUDAC._unavailable_reason()}"
    else:
        reason = f"needs a CUDA device: {NO_CUDA_BUILD}"
    if _gpu_required():
        pytest.exit(
            f"TORCH_CUDA_REQUIRE_GPU=1 and {len(gpu_items)} GPU test(s) cannot run: {reason}",
            returncode=pytest.ExitCode.TESTS_FAILED,
        )
    for item in gpu_items:
        item.add_marker(pytest.mark.skip(reason=reason))


# Every CUDA kernel is loaded before the first GPU test runs. With lazy module
# loading the first launch of a kernel waits for the device to drain, so a test
# that queues work behind a long kernel and then launches a kernel for the
# first time would see its streams serialised. torch_cuda asks for eager
# loading at import (CUDA_MODULE_LOADING); this warm-up also covers a process
# where something else initialised the CUDA runtime first.
@pytest.fixture(scope="session", autouse=True)
def _warm_up_cuda_kernels(request: pytest.FixtureRequest) -> None:
    if not any(item.get_closest_marker("gpu") for item in request.session.items):
        return
    if _cuda_device_count() == 0:
        return
    import torch_core as tc
    import torch_cuda

    for index in range(torch_cuda.device_count()):
        device = f"cuda:{index}"
        for dtype in (tc.float32, tc.float64, tc.int64):
            a = tc.ones((4, 4), dtype=dtype, device=device)
            for out in (a + a, a - a, a * a, a / a, -a, a.relu(), a.sum(), a.max(), a @ a):
                out.numpy()
            if dtype != tc.int64:
                for out in (a.exp(), a.tanh(), a.softmax(-1)):
                    out.numpy()
            tc.ones(1 << 20, dtype=dtype, device=device).sum().numpy()  # the two-pass reduction
            a.to(tc.bool).numpy()
        torch_cuda.synchronize(index)
