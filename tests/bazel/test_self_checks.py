"""The project's own invariants, checked with its own tools.

- core/ names no CUDA in any form (file contents and file names);
- `torchsplit scan core/` finds no coupling, comments included;
- `torchsplit reorg check` agrees with the BUILD files, and catches drift.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from builds import REPO

pytestmark = pytest.mark.bazel

SELF_RULES = REPO / "tools" / "reorg" / "torchsplit_self.toml"


def torchsplit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "tools" / "torchsplit"), *args],
        cwd=REPO,
        env={**os.environ, "TORCHSPLIT_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_no_file_under_core_names_cuda() -> None:
    offenders = []
    for path in (REPO / "core").rglob("*"):
        if "__pycache__" in path.parts:
            continue  # bytecode embeds the checkout's absolute path, whatever it is called
        if "cuda" in str(path.relative_to(REPO)).lower():
            offenders.append(f"{path}: in its name")
        elif path.is_file() and re.search(rb"cuda", path.read_bytes(), re.IGNORECASE):
            offenders.append(str(path))
    assert offenders == []


def test_scan_finds_no_coupling_in_core() -> None:
    proc = torchsplit("scan", "core")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 finding(s)" in proc.stdout + proc.stderr


def test_reorg_check_agrees_with_build_files() -> None:
    proc = torchsplit(
        "reorg", "check", "--build-variables", "build_variables.bzl",
        "--rules", str(SELF_RULES), "--bazel", str(REPO / "tools" / "bazel"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "//third_device/torch_cuda:aten: ok" in proc.stdout


def test_reorg_check_catches_a_source_listed_for_the_wrong_target(tmp_path: Path) -> None:
    # The backend's lists live in its own build_variables.bzl, read through [inputs].
    text = (REPO / "third_device" / "torch_cuda" / "build_variables.bzl").read_text()
    moved = '    "third_device/torch_cuda/csrc/framework/CUDAHooks.cpp",\n'
    assert moved in text
    text = text.replace(moved, "").replace(
        "torch_cuda_jit_sources = [\n", "torch_cuda_jit_sources = [\n" + moved
    )
    (tmp_path / "build_variables.bzl").write_text((REPO / "build_variables.bzl").read_text())
    # Every backend's lists as they are (whatever backends the checkout has), torch_cuda's drifted.
    for lists in (REPO / "third_device").glob("*/build_variables.bzl"):
        (tmp_path / "third_device" / lists.parent.name).mkdir(parents=True)
        (tmp_path / "third_device" / lists.parent.name / "build_variables.bzl").write_text(
            text if lists.parent.name == "torch_cuda" else lists.read_text()
        )
    drifted = tmp_path / "build_variables.bzl"
    proc = torchsplit(
        "reorg", "check", "--build-variables", str(drifted), "--rules", str(SELF_RULES),
        "--bazel", str(REPO / "tools" / "bazel"), "--workspace", str(REPO),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "CUDAHooks.cpp" in proc.stdout
