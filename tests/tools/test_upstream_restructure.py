"""`torchsplit upstream restructure` on a small PyTorch-shaped tree (real paths, a few
files): the git history, headers following their sources, the post-move overlay, and
what replacing the output refuses. The real tree runs under `tools/dev upstream`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from torchsplit.cli import main

BVARS = """
libtorch_core_sources = ["torch/csrc/autograd/engine.cpp"]
libtorch_cuda_core_sources = ["torch/csrc/cuda/comm.cpp"]
libtorch_python_cuda_core_sources = ["torch/csrc/cuda/Module.cpp"]
aten_cuda_cu_source_list = ["aten/src/ATen/cuda/CUDAContext.cpp"]
"""

FILES = {
    "build_variables.bzl": BVARS,
    "torch/csrc/autograd/engine.cpp": "#include <torch/csrc/autograd/engine.h>\n",
    "torch/csrc/autograd/engine.h": "#pragma once\n",
    "torch/csrc/utils.h": "#pragma once\n#include <c10/cuda/CUDAStream.h>\n",
    "torch/csrc/cuda/comm.cpp": "#include <torch/csrc/cuda/comm.h>\n",
    "torch/csrc/cuda/comm.h": "#pragma once\n",
    "torch/csrc/cuda/Module.cpp": "#include <torch/csrc/cuda/Module.h>\n",
    "torch/csrc/cuda/Module.h": "#pragma once\n",
    "torch/csrc/cuda/THCP.h": "#pragma once\n",
    "aten/src/ATen/cuda/CUDAContext.cpp": "#include <ATen/cuda/CUDAContext.h>\n",
    "aten/src/ATen/cuda/CUDAContext.h": "#pragma once\n",
    "c10/build.bzl": "def define_targets(rules):\n    pass\n",
    "c10/BUILD.bazel": "# upstream's\n",
    "c10/core/Device.cpp": "#include <c10/core/Device.h>\n",
    "c10/core/Device.h": "#pragma once\n",
    "c10/cuda/BUILD.bazel": "# upstream's, superseded\n",
    "c10/cuda/build.bzl": "def define_targets(rules):\n    pass\n",
    "c10/cuda/README.md": "c10/cuda\n",
    "c10/cuda/CUDAStream.cpp": "#include <c10/cuda/CUDAStream.h>\n",
    "c10/cuda/CUDAStream.h": "#pragma once\n#include <c10/cuda/impl/cuda_cmake_macros.h>\n",
    "c10/cuda/impl/CUDAGuardImpl.cpp": "#include <c10/cuda/impl/CUDAGuardImpl.h>\n",
    "c10/cuda/impl/CUDAGuardImpl.h": "#pragma once\n",
    "c10/cuda/impl/cuda_cmake_macros.h.in": "#cmakedefine C10_CUDA_BUILD_SHARED_LIBS\n",
    "c10/cuda/test/impl/CUDATest.cpp": "#include <c10/cuda/CUDAStream.h>\n",
    "c10/cuda/test/impl/Assert.cu": "__global__ void k() {}\n",
}
CUDA = "third_device/torch_cuda"


def _tree(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture(scope="module")
def restructured(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("up")
    tree = _tree(base / "pytorch")
    out = base / "split"
    assert main(["upstream", "restructure", "--source-tree", str(tree), "--out", str(out)]) == 0
    return out


def test_history_is_import_moves_overlay(restructured):
    subjects = _git(restructured, "log", "--format=%s").splitlines()
    assert subjects[-1] == "PyTorch source tree pytorch, as released"
    assert subjects[-2].startswith("Move ")
    assert subjects[0].startswith("Bazel overlay of the split")
    assert len(subjects) == 3  # no torch_patches for an unknown version
    renames = _git(restructured, "show", "--format=", "--name-status", "-M100%", "HEAD~1")
    assert renames and all(line.startswith("R100\t") for line in renames.splitlines())
    assert not _git(restructured, "status", "--porcelain")  # the mark lives in .git


def test_headers_and_directories_follow_their_sources(restructured):
    moves = {
        row.split("\t")[0]: row.split("\t")[1]
        for row in (restructured / "torchsplit/moves.tsv").read_text().splitlines()[1:]
    }
    fw = f"{CUDA}/csrc/framework"
    # Same-stem headers move with their sources.
    assert moves["torch/csrc/cuda/comm.h"] == f"{fw}/cuda/comm.h"
    assert moves["torch/csrc/cuda/Module.h"] == f"{CUDA}/csrc/pybinding/cuda/Module.h"
    # c10/cuda moves whole, to the RFC's csrc/framework/cuda: templates, docs, tests too.
    for rel in ("README.md", "impl/cuda_cmake_macros.h.in", "test/impl/CUDATest.cpp"):
        assert moves[f"c10/cuda/{rel}"] == f"{fw}/cuda/{rel}"
        assert (restructured / fw / "cuda" / rel).is_file()
    # upstream's Bazel files there are superseded by the overlay, not moved.
    assert not (restructured / "c10/cuda").exists()
    assert "c10/cuda/BUILD.bazel" not in moves
    # A header whose directory's sources go two ways is left, and listed for a human.
    left = (restructured / "torchsplit/headers_left.tsv").read_text()
    assert "torch/csrc/cuda/THCP.h\ttorch/csrc/cuda\tevery source here moves" in left
    assert (restructured / "torch/csrc/cuda/THCP.h").exists()
    # A core file including a moving header is listed (the decoupling work).
    patches = (restructured / "torchsplit/core_patches.tsv").read_text()
    assert f"torch/csrc/utils.h\t2\tc10/cuda/CUDAStream.h\t{fw}/cuda/CUDAStream.h" in patches


def test_the_overlay_names_the_new_paths_and_keeps_the_include_spelling(restructured):
    build = (restructured / CUDA / "BUILD.bazel").read_text()
    assert '"csrc/framework/cuda/CUDAStream.h",' in build
    assert 'include_prefix = "c10",\n    strip_include_prefix = "csrc/framework",' in build
    assert 'out = "csrc/framework/cuda/impl/cuda_cmake_macros.h"' in build
    assert 'name = "c10_cuda",' in build and "target_compatible_with = requires_cuda()" in build
    assert 'name = "c10_cuda_12_6",' in build and '"@cuda_host_12_6//:cuda_runtime",' in build
    assert 'name = "c10_cuda_test_CUDATest",' in build and 'tags = ["gpu"],' in build
    assert 'srcs = ["csrc/framework/cuda/test/impl/Assert.cu"],' in build
    split = (restructured / "build_variables_split.bzl").read_text()
    assert f'"{CUDA}/csrc/framework/cuda/CUDAStream.cpp",' in split
    assert '"c10/cuda/' not in split
    # upstream's c10 targets with the split's core rules (no CUDA rule loaded by core).
    c10 = (restructured / "c10/BUILD.bazel").read_text()
    assert 'load("//tools/torchsplit:core_rules.bzl", "rules")' in c10
    assert "@rules_cuda" not in (restructured / "tools/torchsplit/core_rules.bzl").read_text()
    # torchsplit's real rules_cuda and the tree's policy come along.
    assert (restructured / "tools/repos/rules_cuda/cuda/private/cuda_library.bzl").exists()
    policy = (restructured / "tools/layering/policy.bzl").read_text()
    assert '["core", "//c10/..."]' in policy and '"local_cuda",' in policy
    # Packages the split does not build are ignored by Bazel.
    assert "torchgen\n" in (restructured / ".bazelignore").read_text()


def test_replacing_the_result_refuses_what_a_user_changed(tmp_path, capsys):
    tree = _tree(tmp_path / "pytorch")
    out = tmp_path / "split"
    args = ["upstream", "restructure", "--source-tree", str(tree), "--out", str(out)]
    assert main(args) == 0
    head = _git(out, "rev-parse", "HEAD")
    assert main(args) == 0  # torchsplit's own result: replaced, identically
    assert _git(out, "rev-parse", "HEAD") == head
    (out / "c10/core/Device.cpp").write_text("// my edit\n")
    assert main(args) == 2
    assert "uncommitted changes" in capsys.readouterr().err
    assert (out / "c10/core/Device.cpp").read_text() == "// my edit\n"
    assert main([*args, "--force"]) == 0
    assert (out / "c10/core/Device.cpp").read_text() == FILES["c10/core/Device.cpp"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".split.")]


def test_a_directory_torchsplit_did_not_write_is_refused(tmp_path, capsys):
    tree = _tree(tmp_path / "pytorch")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "thesis.tex").write_text("x")
    args = ["upstream", "restructure", "--source-tree", str(tree), "--out", str(theirs)]
    assert main(args) == 2
    assert "did not write" in capsys.readouterr().err
    assert (theirs / "thesis.tex").exists()


def test_a_tree_without_build_variables_is_an_error(tmp_path, capsys):
    (tmp_path / "t").mkdir()
    args = ["--source-tree", str(tmp_path / "t"), "--out", str(tmp_path / "o")]
    assert main(["upstream", "restructure", *args]) == 2
    assert "no build_variables.bzl: not a PyTorch source tree" in capsys.readouterr().err


def test_a_fetched_tree_restructured_again_is_kept(tmp_path, capsys):
    """Same fetched tarball (its stamp), same torchsplit: the result is kept, not redone."""
    tree = _tree(tmp_path / "pytorch")
    (tree / ".torchsplit-fetched").write_text('{"version": "9.9.9", "sha256": "ab12"}\n')
    out = tmp_path / "split"
    args = ["upstream", "restructure", "--source-tree", str(tree), "--out", str(out)]
    assert main(args) == 0
    first = capsys.readouterr()
    head = _git(out, "rev-parse", "HEAD")
    assert main(args) == 0
    again = capsys.readouterr()
    assert "is already this restructure (same tree, same torchsplit): kept" in again.err
    assert again.out.splitlines()[:2] == first.out.splitlines()[:2]  # the same summary
    assert _git(out, "rev-parse", "HEAD") == head
    assert not (out / ".torchsplit-fetched").exists()  # the stamp is no file of the tree
    (out / "c10/core/Device.cpp").write_text("// edited\n")  # then it is not reused
    assert main(args) == 2
    assert "uncommitted changes" in capsys.readouterr().err
