"""The checkout, Bazel run on it, and what its build produced.

Tests import these from here, never from ``conftest``: several directories have a
conftest.py, and which one ``import conftest`` finds depends on what pytest
collected first.
"""

from __future__ import annotations

import importlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent

NO_CUDA_BUILD = (
    "torch_cuda was not built here (cpu-only build or no CUDA toolkit: "
    "tools/dev build names the reason)"
)


NO_HIP_BUILD = (
    "torch_hip was not built here (no HIP toolkit, no torch wheel to hipify with, or a "
    "cpu-only build: tools/dev build names the reason)"
)


FAKE_DEVICE_TARGET = "//tests:backends/_fake_device.so"


def import_fake_device() -> ModuleType:
    """The test-only "fake" backend (registers device type "fake"), or an error naming its build.

    tools/dev build and tools/dev test build it; a build of only //core:all
    and the backends does not.
    """
    try:
        return importlib.import_module("_fake_device")
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "the test-only backend _fake_device is not built: run tools/dev build "
            f"(it builds {FAKE_DEVICE_TARGET}) or bazelisk build {FAKE_DEVICE_TARGET}"
        ) from error


def extension_built(backend: str, extension: str) -> bool:
    """Whether a backend's extension is in bazel-bin (checkout) or beside the sources (runfiles)."""
    return any(
        (base / f"third_device/{backend}/{backend}/{extension}.so").exists()
        for base in (REPO / "bazel-bin", REPO)
    )


def cuda_extension_built() -> bool:
    return extension_built("torch_cuda", "_CUDAC")


class _NotBuilt(pytest.Item):
    def runtest(self) -> None:
        pytest.skip(self.parent.reason)  # type: ignore[union-attr]


class _NotBuiltModule(pytest.File):
    reason = ""

    def collect(self) -> Iterator[pytest.Item]:
        yield _NotBuilt.from_parent(self, name=self.path.stem)


def not_built(module_path: Path, parent: pytest.Collector, reason: str) -> pytest.File:
    """A test file whose backend was not built, as one skipped test naming why (for a
    conftest's pytest_pycollect_makemodule: the file, which imports the backend at
    module level, is not imported at all)."""
    module = _NotBuiltModule.from_parent(parent, path=module_path)
    module.reason = reason
    return module


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
