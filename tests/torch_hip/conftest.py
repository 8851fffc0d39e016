"""tests/torch_hip needs torch_hip's extension: when it was not built (no HIP
toolkit, no torch wheel to hipify with, or a cpu-only build), each file here is
reported as one skipped test naming why; the files import torch_hip at module
level, so they are not imported at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from builds import REPO

NO_HIP_BUILD = (
    "torch_hip was not built here (no HIP toolkit, no torch wheel to hipify with, or a "
    "cpu-only build: tools/dev build names the reason)"
)


def hip_extension_built() -> bool:
    """Whether _HIPC.so is in bazel-bin (checkout) or beside the sources (runfiles)."""
    return any(
        (base / "third_device/torch_hip/torch_hip/_HIPC.so").exists()
        for base in (REPO / "bazel-bin", REPO)
    )


class _NotBuilt(pytest.Item):
    def runtest(self) -> None:
        pytest.skip(NO_HIP_BUILD)


class _NotBuiltModule(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield _NotBuilt.from_parent(self, name=self.path.stem)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    if hip_extension_built():
        return None
    return _NotBuiltModule.from_parent(parent, path=module_path)
