"""tests/torch_hip needs torch_hip's extension: when it was not built (no HIP
toolkit, no torch wheel to hipify with, or a cpu-only build), each file here is
reported as one skipped test naming why; the files import torch_hip at module
level, so they are not imported at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from builds import NO_HIP_BUILD, extension_built, not_built


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    built = extension_built("torch_hip", "_HIPC")
    return None if built else not_built(module_path, parent, NO_HIP_BUILD)
