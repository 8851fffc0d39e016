"""`reorg workspace` on a small fixture: decisions, the overlay Bazel analyses, the layering
audit on it (and both failing on an injected core->backend edge), globs, the move plan."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.checkout import git
from torchsplit.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "workspace"
BVARS = FIXTURES / "build_variables.bzl"
FILES = FIXTURES / "files.txt"
CUDA = "//third_device/torch_cuda:"


def _launcher() -> str:
    bazelisk = REPO / "node_modules" / ".bin" / "bazelisk"
    return str(bazelisk if bazelisk.exists() else REPO / "tools" / "bazel")


def _decisions(out: Path) -> dict[str, dict[str, object]]:
    data = json.loads((out / "torchsplit" / "decisions.json").read_text())
    return {d["source"]: d for d in data["decisions"]}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ws") / "ws"
    assert (
        main(["reorg", "workspace", str(BVARS), "--file-list", str(FILES), "--out", str(out)]) == 0
    )
    return out


def test_fixture_is_split_as_upstream_builds_it(workspace):
    d = _decisions(workspace)
    target = {s: v["target"] for s, v in d.items()}
    assert target["torch/csrc/Module.cpp"] == "//core:torch_python"
    assert target["torch/csrc/jit/mobile/function.cpp"] == "//core:torch_lite"
    assert target["torch/csrc/jit/mobile/model_tracer/tracer.cpp"] == "//core:model_tracer"
    assert target["torch/csrc/lazy/ts_backend/ts_node.cpp"] == "//core:torch_lazy_ts"
    assert target["lazy/generated/LazyNativeFunctions.cpp"] == "//core:torch_lazy_ts"
    assert target["torch/csrc/xpu/Stream.cpp"] == "//third_device/torch_xpu:pybinding"
    fb = "torch/nativert/executor/triton/fb/MtiaTritonKernelManager.cpp"
    assert target[fb] == "//out_of_scope:excluded"
    # globbed files, placed by directory
    assert target["aten/src/ATen/native/cuda/Copy.cu"] == CUDA + "aten"
    assert target["aten/src/ATen/native/sparse/cuda/SparseCUDATensor.cu"] == CUDA + "aten"
    assert target["aten/src/ATen/cuda/CUDAContext.h"] == CUDA + "aten"
    assert target["c10/cuda/CUDAStream.cpp"] == CUDA + "c10_cuda"  # under :framework
    assert target["aten/src/ATen/native/miopen/Conv_miopen.cpp"] == "//out_of_scope:excluded"
    assert "c10/cuda/test/impl/CUDATest.cpp" not in target
    # roles
    assert d["torch/library.h"]["role"] == "header"
    assert d[":generate-code[torch/csrc/autograd/generated/Functions.cpp]"]["role"] == "generated"
    report = json.loads((workspace / "torchsplit" / "report.json").read_text())
    kinds = {(f["kind"], f["subject"]) for f in report["flags"]}
    assert ("defines-main", "torch/csrc/jit/mobile/model_tracer/tracer.cpp") in kinds
    assert ("other-device-in-core", "torch/csrc/mps/Module.cpp") in kinds
    assert ("rocm-only", "aten/src/ATen/native/miopen/Conv_miopen.cpp") in kinds
    assert not [k for k, _ in kinds if k in ("unexpanded-glob", "list-without-rule")]


def test_overlay_shapes(workspace):
    core = (workspace / "core" / "BUILD.bazel").read_text()
    assert 'name = "_C"' in core and 'deps = [":torch_python"]' in core
    assert 'cc_binary(\n    name = "model_tracer"' in core
    assert 'torchsplit_generated(\n    name = "torch_cpu_generated"' in core
    assert "hdrs = torchsplit_srcs(torch_cpu_sources_hdrs" in core
    cuda = (workspace / "third_device" / "torch_cuda" / "BUILD.bazel").read_text()
    assert 'name = "_CUDAC"' in cuda
    assert 'backend_visibility("torch_cuda")' in cuda
    split = (workspace / "build_variables_split.bzl").read_text()
    assert '"torch/csrc/autograd/generated/Functions.cpp"' in split  # a stand-in out
    assert '":generate-code[' not in split


def test_without_a_tree_the_globs_are_named(tmp_path):
    out = tmp_path / "e"
    assert main(["reorg", "emit", str(BVARS), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "Not covered" in text and "`glob(aten/src/ATen/native/cuda/**)`" in text
    assert "aten/src/ATen/native/cuda/Copy.cu" not in (out / "decisions.json").read_text()


def _bazel(ws: Path, base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_launcher(), f"--output_base={base}", *args],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


def test_bazel_analyses_it_and_audit_passes_then_both_catch_an_injected_edge(
    workspace, tmp_path, capsys
):
    base = tmp_path / "ob"
    audit = ["audit", "--workspace", str(workspace), "--bazel", _launcher()]
    audit += ["--output-base", str(base)]
    try:
        proc = _bazel(workspace, base, "build", "--nobuild", "//...")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert main(audit) == 0
        build = workspace / "core" / "BUILD.bazel"
        text = build.read_text()
        i = text.index('name = "torch_lazy_ts"')
        j = text.index('        ":torch_cpu",\n', i)
        build.write_text(text[:j] + f'        "{CUDA}framework",\n' + text[j:])
        capsys.readouterr()
        proc = _bazel(workspace, base, "build", "--nobuild", "//...")
        assert proc.returncode != 0
        assert f"target '{CUDA}framework' is not visible from target '//core:torch_lazy_ts'" in (
            proc.stderr
        )
        assert main(audit) == 1
        out = capsys.readouterr().out
        assert f"//core:torch_lazy_ts cannot depend on {CUDA}framework" in out
        # A CUDA source in a core target's srcs: refused during analysis (the aspect) and
        # by the audit (its graph query and its BUILD-file check).
        cu = "aten/src/ATen/native/cuda/Copy.cu"
        anchor = 'srcs = torchsplit_srcs(torch_cpu_sources, "core")'
        assert anchor in text
        build.write_text(text.replace(anchor, f'{anchor} + ["//:{cu}"]', 1))
        proc = _bazel(workspace, base, "build", "--nobuild", "//...")
        assert proc.returncode != 0
        assert f"//core:torch_cpu: it lists {cu} in srcs: a device source (.cu" in proc.stderr
        assert main(audit) == 1
        out = capsys.readouterr().out
        assert "GRAPH [core-device-source] //core:torch_cpu: core -> a device compiler: " in out
        assert "BUILD [core-device-source] core/BUILD.bazel:" in out
    finally:
        _bazel(workspace, base, "shutdown")


def test_move_script_on_a_scratch_git_repository(tmp_path):
    repo = tmp_path / "pytorch"
    repo.mkdir()
    odd = "torch/csrc/cuda/it's a $(touch pwned) file.cpp"
    bvars = tmp_path / "bv.bzl"
    bvars.write_text(
        "libtorch_cuda_core_sources = [\n"
        f'    "{odd}",\n'
        '    "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",\n'
        "]\n"
        'libtorch_core_sources = ["torch/csrc/autograd/engine.cpp"]\n'
    )
    for rel in (
        odd,
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
        "torch/csrc/autograd/engine.cpp",
    ):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("// placeholder\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    out = tmp_path / "plan"
    assert main(["reorg", "emit", str(bvars), "--out", str(out)]) == 0
    rows = (out / "moves.tsv").read_text().splitlines()
    assert rows[0] == "source\tdestination\tmodule\treason"
    assert (
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp\t"
        "third_device/torch_cuda/csrc/distributed/c10d/ProcessGroupNCCL.cpp\tdistributed\t"
    ) in "\n".join(rows)
    script = out / "moves.sh"
    # a dirty tree is refused, and nothing moves
    (repo / "torch/csrc/autograd/engine.cpp").write_text("// edited\n")
    proc = subprocess.run([str(script)], cwd=repo, capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "uncommitted changes" in proc.stderr
    assert (repo / odd).exists()
    git(repo, "checkout", "-q", "--", ".")
    proc = subprocess.run(
        [str(script)], cwd=repo / "torch", capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "moved 2 files" in proc.stdout
    assert (repo / "third_device/torch_cuda/csrc/framework/cuda" / Path(odd).name).exists()
    assert not (repo / "pwned").exists() and not (repo / "torch" / "pwned").exists()
    status = git(repo, "status", "--porcelain")
    assert status.count("R  ") == 2


def test_core_files_including_a_moving_header(tmp_path):
    include = tmp_path / "include"
    (include / "ATen" / "native").mkdir(parents=True)
    (include / "ATen" / "cuda").mkdir(parents=True)
    (include / "ATen" / "native" / "Stays.h").write_text(
        "#pragma once\n#include <ATen/cuda/CUDAContext.h>\n#include <ATen/Tensor.h>\n"
    )
    (include / "ATen" / "cuda" / "CUDAContext.h").write_text('#include "ATen/cuda/CUDABlas.h"\n')
    out = tmp_path / "e"
    args = ["reorg", "emit", str(BVARS), "--file-list", str(FILES), "--out", str(out)]
    assert main([*args, "--include-tree", str(include)]) == 0
    # The spelling stays; the header library serving it from the new place is named.
    mapping = (out / "include_map.tsv").read_text()
    new = "third_device/torch_cuda/csrc/aten/cuda/CUDAContext.h"
    assert f"ATen/cuda/CUDAContext.h\t{new}\t//third_device/torch_cuda:aten_headers_1\n" in mapping
    patches = (out / "core_patches.tsv").read_text().splitlines()
    assert patches == [
        "file\tline\tinclude\tmoved_to",
        f"ATen/native/Stays.h\t2\tATen/cuda/CUDAContext.h\t{new}",
    ]


def test_computed_bare_names_are_placed_nowhere(tmp_path):
    bvars = tmp_path / "bv.bzl"
    bvars.write_text(
        'nvfuser_headers = ["{}.h".format(n) for n in ["array", "tensor"]]\n'
        'libtorch_cuda_sources = ["torch/csrc/cuda/comm.cpp"] + nvfuser_headers\n'
    )
    out = tmp_path / "ws"
    assert main(["reorg", "workspace", str(bvars), "--out", str(out)]) == 0
    report = json.loads((out / "torchsplit" / "report.json").read_text())
    bare = [f for f in report["flags"] if f["kind"] == "bare-name"]
    assert bare and "2 entries" in bare[0]["message"]
    assert not (out / "array.h").exists()
    cuda = (out / "third_device" / "torch_cuda" / "BUILD.bazel").read_text()
    assert "array.h" not in cuda
    split = (out / "build_variables_split.bzl").read_text()
    assert 'torch_cuda_framework_sources_unplaced = [\n    "array.h",' in split


def test_after_moves_sh_the_overlay_still_analyses_and_reorg_check_agrees(tmp_path, capsys):
    """moves.sh moves the files, then writes the overlay naming the new paths (it used to
    leave BUILD files naming the old ones: one analysis error per moved file)."""
    ws = tmp_path / "ws"
    args = ["reorg", "workspace", str(BVARS), "--file-list", str(FILES), "--out", str(ws)]
    assert main(args) == 0
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "placeholders and overlay")
    proc = subprocess.run(
        ["sh", "torchsplit/moves.sh"], cwd=ws, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "moves.sh: wrote the post-move overlay" in proc.stdout
    cuda = (ws / "third_device/torch_cuda/BUILD.bazel").read_text()
    split = (ws / "build_variables_split.bzl").read_text()
    assert '"third_device/torch_cuda/csrc/framework/cuda/CUDAStream.cpp"' in split
    assert 'include_prefix = "c10"' in cuda  # moved headers keep <c10/cuda/...>
    base = tmp_path / "ob"
    try:
        proc = _bazel(ws, base, "build", "--nobuild", "//...")
        assert proc.returncode == 0, proc.stderr[-3000:]
        capsys.readouterr()
        check = ["reorg", "check", "--build-variables", str(BVARS), "--file-list", str(FILES)]
        check += ["--moves", str(ws / "torchsplit/moves.tsv"), "--workspace", str(ws)]
        assert main([*check, "--bazel", _launcher()]) == 0
        out = capsys.readouterr().out
        assert "classification and BUILD files agree" in out
        assert "//out_of_scope:excluded: not compared" in out  # no "no such package"
    finally:
        _bazel(ws, base, "shutdown")
        # reorg check's queries ran in the default output base: its server too.
        subprocess.run(
            [_launcher(), "shutdown"], cwd=ws, capture_output=True, timeout=300, check=False
        )


def test_an_older_file_with_nvfuser_and_no_xpu(tmp_path):
    """1.13's build_variables: nvfuser's runtime (stringified for the fuser, ROCm variants
    among them) and no XPU or nativert lists."""
    bvars = tmp_path / "bv.bzl"
    bvars.write_text(
        "libtorch_nvfuser_runtime_sources = [\n"
        '    "torch/csrc/jit/codegen/cuda/runtime/array.cu",\n'
        '    "torch/csrc/jit/codegen/cuda/runtime/array_rocm.cu",\n'
        '    "aten/src/ATen/cuda/detail/UnpackRaw.cuh",\n'
        "]\n"
        'libtorch_nvfuser_generated_headers = ["{}.h".format(n.split("/")[-1].split(".")[0])'
        " for n in libtorch_nvfuser_runtime_sources]\n"
        'libtorch_core_sources = ["torch/csrc/autograd/engine.cpp"]\n'
        'libtorch_python_core_sources = ["torch/csrc/Module.cpp"]\n'
    )
    out = tmp_path / "ws"
    assert main(["reorg", "workspace", str(bvars), "--out", str(out)]) == 0
    d = _decisions(out)
    runtime = d["torch/csrc/jit/codegen/cuda/runtime/array.cu"]
    assert (runtime["target"], runtime["role"]) == (CUDA + "jit", "data")
    assert d["torch/csrc/jit/codegen/cuda/runtime/array_rocm.cu"]["target"] == (
        "//out_of_scope:excluded"
    )
    report = json.loads((out / "torchsplit" / "report.json").read_text())
    # All nvfuser entries (3 runtime files, 3 computed header names) under libtorch_cuda.
    assert report["libraries"]["libtorch_cuda"]["entries"] == 6
    assert report["libraries"]["libtorch_cpu"]["entries"] == 1
    assert "_XPUC" not in report["extensions"]
    cuda = (out / "third_device/torch_cuda/BUILD.bazel").read_text()
    assert 'name = "jit_generator_inputs"' in cuda  # data of the fuser, never srcs
    assert not (out / "third_device/torch_xpu").exists()  # no library built from nothing
    assert 'name = "torch_nativert"' not in (out / "core/BUILD.bazel").read_text()
