"""tests/torch_cuda needs torch_cuda's extension: when it was not built, each
file here is reported as one skipped test naming why (the files import
torch_cuda at module level, so they are not imported at all)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from builds import NO_CUDA_BUILD, cuda_extension_built


class _NotBuilt(pytest.Item):
    def runtest(self) -> None:
        pytest.skip(NO_CUDA_BUILD)


class _NotBuiltModule(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield _NotBuilt.from_parent(self, name=self.path.stem)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    if cuda_extension_built():
        return None
    return _NotBuiltModule.from_parent(parent, path=module_path)
