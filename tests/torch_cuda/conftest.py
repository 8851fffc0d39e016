"""tests/torch_cuda needs torch_cuda's extension: when it was not built, each
file here is reported as one skipped test naming why (the files import
torch_cuda at module level, so they are not imported at all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from builds import NO_CUDA_BUILD, cuda_extension_built, not_built


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    return None if cuda_extension_built() else not_built(module_path, parent, NO_CUDA_BUILD)
