"""MODULE.bazel (Bazel >= 7) must declare what WORKSPACE (Bazel 4.2.3) provides."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from bazel_files import drift, read_module, read_workspace

from builds import REPO


def test_module_matches_workspace() -> None:
    problems = drift(read_workspace(REPO / "WORKSPACE"), read_module(REPO / "MODULE.bazel"))
    assert problems == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('use_repo(cuda, "cuda_wheels", "local_cuda")', "", "use_repo differs"),
        ('path = "tools/repos/rules_cuda"', 'path = "elsewhere"', "local repositories differ"),
        (
            'toolkit_visibility = ["@//third_device/torch_cuda:__subpackages__"]',
            'toolkit_visibility = ["//visibility:public"]',
            "extension tag",
        ),
        ('name = "torchsplit"', 'name = "other"', "module name"),
    ],
)
def test_drift_is_detected(tmp_path: Path, old: str, new: str, expected: str) -> None:
    text = (REPO / "MODULE.bazel").read_text()
    assert old in text
    mutated = tmp_path / "MODULE.bazel"
    mutated.write_text(text.replace(old, new))
    problems = drift(read_workspace(REPO / "WORKSPACE"), read_module(mutated))
    assert any(expected in p for p in problems), problems
