"""new-backend adds the backend's :all_files to //:all_files (checkout_files.py), so the
workspace tests' copy of the checkout has it. No Bazel: the root BUILD.bazel as text."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.backend import checkout_files
from torchsplit.errors import TorchsplitError

BUILDIFIER = REPO / "node_modules" / ".bin" / "buildifier"


def _root_build() -> str:
    return (REPO / checkout_files.ROOT_BUILD).read_text()


def _backend_labels(text: str) -> list[str]:
    return re.findall(r'"//third_device/(\w+):all_files"', text)


@pytest.mark.parametrize("package", ["torch_acme", "torch_musa", "torch_zzz", "torch_aaa"])
def test_the_label_joins_the_backends_in_sorted_order(package: str) -> None:
    before = _backend_labels(_root_build())
    after = _backend_labels(checkout_files.add_backend(_root_build(), package))
    assert after == sorted([*before, package])


def test_only_the_label_line_is_added() -> None:
    text = checkout_files.add_backend(_root_build(), "torch_musa")
    added = set(text.splitlines()) - set(_root_build().splitlines())
    assert added == {'        "//third_device/torch_musa:all_files",'}
    assert len(text.splitlines()) == len(_root_build().splitlines()) + 1


@pytest.mark.skipif(not BUILDIFIER.exists(), reason="no buildifier (tools/dev bootstrap)")
def test_buildifier_accepts_the_edited_root(tmp_path: Path) -> None:
    path = tmp_path / "BUILD.bazel"
    path.write_text(checkout_files.add_backend(_root_build(), "torch_musa"))
    proc = subprocess.run(
        [str(BUILDIFIER), "--mode=check", "--lint=warn", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_label_already_there_is_refused() -> None:
    with pytest.raises(TorchsplitError, match="names //third_device/torch_emu:all_files already"):
        checkout_files.add_backend(_root_build(), "torch_emu")


def test_a_root_that_lists_no_backend_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "BUILD.bazel").write_text('filegroup(name = "x", srcs = ["a"])\n')
    assert checkout_files.grant(tmp_path, "torch_musa") == {}
    with pytest.raises(TorchsplitError, match="no //third_device/<backend>:all_files label"):
        checkout_files.add_backend("", "torch_musa")
