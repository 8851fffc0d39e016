"""End to end on the real PyTorch tree restructured by `tools/dev upstream`.

`tools/dev upstream` fetches Debian's PyTorch source package, restructures it,
builds and tests c10 and c10/cuda, then runs this file with
TORCHSPLIT_UPSTREAM_TREE naming the restructured repository. It checks the
repository's history and injects the violations the split must catch on real
code; each injection is reverted with git. Elsewhere (no tree) it is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = [pytest.mark.upstream, pytest.mark.bazel]

REPO = Path(__file__).resolve().parents[2]
TREE = Path(os.environ.get("TORCHSPLIT_UPSTREAM_TREE", "/nonexistent"))
if not (TREE / ".git").is_dir():
    pytest.skip(
        "runs under `tools/dev upstream` (TORCHSPLIT_UPSTREAM_TREE: the restructured tree)",
        allow_module_level=True,
    )


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv),
        cwd=TREE,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )


def _bazel(*args: str) -> subprocess.CompletedProcess[str]:
    return _run(str(TREE / "tools" / "bazel"), *args)


def _audit() -> subprocess.CompletedProcess[str]:
    return _run(str(REPO / "tools" / "torchsplit"), "audit", "--workspace", str(TREE))


def _git(*args: str) -> str:
    proc = _run("git", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@contextmanager
def _edited(path: str, old: str, new: str, added: Path | None = None) -> Iterator[None]:
    """``old`` replaced by ``new`` in the tree's ``path`` for the block, then reverted (and
    ``added``, a file the caller wrote for the block, removed)."""
    file = TREE / path
    text = file.read_text(encoding="utf-8")
    assert old in text, f"{path} no longer has {old!r}"
    file.write_text(text.replace(old, new, 1), encoding="utf-8")
    try:
        yield
    finally:
        _git("checkout", "-q", "--", path)
        if added is not None:
            added.unlink(missing_ok=True)
    assert not _git("status", "--porcelain")


def test_history_is_import_moves_patches_overlay() -> None:
    subjects = _git("log", "--format=%s").splitlines()
    assert len(subjects) == 4, subjects
    assert subjects[3].endswith("as released")
    assert subjects[2].startswith("Move ") and "into third_device/" in subjects[2]
    assert subjects[1].startswith("Apply 2 torch_patches")
    assert subjects[0].startswith("Bazel overlay of the split")
    # The move commit holds renames only, each the whole file (git log --follow works).
    status = _git("show", "--format=", "--name-status", "-M100%", "HEAD~2").splitlines()
    rows = (TREE / "torchsplit" / "moves.tsv").read_text().splitlines()[1:]
    assert len(status) == len(rows) > 700
    assert all(line.startswith("R100\t") for line in status), status[:5]
    moved = "third_device/torch_cuda/csrc/framework/cuda/CUDAStream.cpp"
    follow = _git("log", "--follow", "--format=%h", "--", moved).split()
    assert len(follow) == 2  # the move, and the release it comes from


def test_torch_patches_are_the_intra_file_edits() -> None:
    patches = sorted(p.name for p in (TREE / "third_device/torch_cuda/torch_patches").iterdir())
    assert patches == [
        "0001-c10-core-does-not-link-c10-cuda.patch",
        "0002-c10-cuda-cudaMemAdvise-cuda13.patch",
    ]
    changed = _git("show", "--format=", "--name-only", "HEAD~1").split()
    assert "c10/build.bzl" in changed
    assert "third_device/torch_cuda/csrc/framework/cuda/CUDADeviceAssertionHost.cpp" in changed
    # Applied: reversing them applies cleanly on the patched tree.
    for name in patches:
        path = TREE / "third_device/torch_cuda/torch_patches" / name
        assert _run("git", "apply", "--check", "--reverse", str(path)).returncode == 0


def test_core_closure_names_no_cuda() -> None:
    proc = _bazel("aquery", "deps(//c10/...)", "--output=text")
    assert proc.returncode == 0, proc.stderr[-2000:]
    actions = proc.stdout.count("\naction ") + proc.stdout.startswith("action ")
    assert actions > 150
    assert "cuda" not in proc.stdout.lower()


def test_a_cuda_include_in_core_fails_the_build_without_a_toolkit_and_the_audit() -> None:
    with _edited("c10/core/Device.cpp", "#include <c10/core/Device.h>", INCLUDE):
        empty = tempfile.mkdtemp(prefix="no-cuda-")
        try:
            _bazel("shutdown")
            hide = [sys.executable, str(REPO / "tests/bazel/hide_cuda.py"), "--exec"]
            build = [str(TREE / "tools" / "bazel"), "build", "//c10/core:base"]
            if _run("unshare", "-m", "true").returncode == 0:
                proc = _run("unshare", "-m", *hide, *build, env={"TORCHSPLIT_CUDA_CACHE": empty})
            else:
                proc = _run(*build, env={"TORCHSPLIT_CUDA_CACHE": empty})
            _bazel("shutdown")
        finally:
            shutil.rmtree(empty, ignore_errors=True)
        assert proc.returncode != 0
        assert "c10/core/Device.cpp" in proc.stderr
        assert "c10/cuda/CUDAStream.h: No such file or directory" in proc.stderr
        audit = _audit()
    assert audit.returncode == 1, audit.stdout + audit.stderr
    assert "HEADER [core-to-toolkit] c10/core/Device.cpp:1: includes <c10/cuda/CUDAStream.h>" in (
        audit.stdout
    )


INCLUDE = "#include <c10/cuda/CUDAStream.h>\n#include <c10/core/Device.h>"


def test_a_core_dependency_on_torch_cuda_fails_visibility_and_the_audit() -> None:
    old = '            "//c10/util:typeid",\n        ],'
    dep = '            "//third_device/torch_cuda:c10_cuda",\n'
    new = old.replace("        ],", dep + "        ],")
    with _edited("c10/build.bzl", old, new):
        build = _bazel("build", "--nobuild", "//c10:c10")
        audit = _audit()
    assert build.returncode != 0
    assert (
        "target '//third_device/torch_cuda:c10_cuda' is not visible from target '//c10:c10'"
        in build.stderr
    )
    assert audit.returncode == 1, audit.stdout + audit.stderr
    assert (
        "VIOLATION [core-to-backend] //c10:c10 cannot depend on //third_device/torch_cuda:c10_cuda"
        in audit.stdout
    )


def test_a_cu_file_in_a_core_target_fails_analysis_and_the_audit() -> None:
    kernel = TREE / "c10/core/Injected.cu"
    old = '"impl/*.cpp",\n            ],\n            exclude = [\n'
    old += '                "CPUAllocator.cpp",'
    new = old.replace('"impl/*.cpp",', '"impl/*.cpp",\n                "*.cu",')
    kernel.write_text("__global__ void injected() {}\n", encoding="utf-8")
    try:
        with _edited("c10/core/build.bzl", old, new, added=kernel):
            build = _bazel("build", "--nobuild", "//c10/core:base")
            audit = _audit()
    finally:
        kernel.unlink(missing_ok=True)
    assert build.returncode != 0, build.stderr[-2000:]
    assert "c10/core/Injected.cu" in build.stderr and "device source" in build.stderr
    assert audit.returncode == 1, audit.stdout + audit.stderr
    assert "//c10/core:base" in audit.stdout and "Injected.cu" in audit.stdout
