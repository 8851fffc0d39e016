"""Shared test setup: where the repository and Bazel's outputs are, and imports.

The Python packages are split between the source tree (``.py``) and Bazel's
output tree (the compiled extensions); both directories go on sys.path and the
packages merge them (pkgutil.extend_path). ``tools/dev test`` builds first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# tests/ itself: under `bazel test` it is a package (Bazel adds __init__.py
# files) and pytest does not put it on sys.path.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from builds import NO_CUDA_BUILD, cuda_extension_built

REPO = Path(__file__).resolve().parent.parent
BAZEL_BIN = REPO / "bazel-bin"
PACKAGE_ROOTS = ["core", "third_device/torch_cuda", "third_device/torch_emu"]

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


def bazel_command() -> list[str]:
    """The launcher the README uses: bazelisk from node_modules, else tools/bazel."""
    bazelisk = REPO / "node_modules" / ".bin" / "bazelisk"
    if bazelisk.exists():
        return [str(bazelisk)]
    return [str(REPO / "tools" / "bazel")]


class Bazel:
    """Runs Bazel in the repository (same server and output base as the build)."""

    def __init__(self, workspace: Path = REPO, startup: list[str] | None = None) -> None:
        self.workspace = workspace
        self.startup = startup or []

    def run(
        self, *args: str, env: dict[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run(
            [*bazel_command(), *self.startup, *args],
            cwd=self.workspace,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"bazel {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}"
            )
        return proc


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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` need a CUDA device: skip them cleanly when there is none."""
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
    for item in gpu_items:
        item.add_marker(pytest.mark.skip(reason=reason))
