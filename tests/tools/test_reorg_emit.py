"""Emit: split .bzl + BUILD overlay + reports, atomic and byte-identical; CLI behaviour."""

import json
from pathlib import Path

import starlark as sl

from torchsplit.cli import main
from torchsplit.reorg.starlark_eval import evaluate

FIXTURE = Path(__file__).parent / "fixtures" / "pytorch_style" / "build_variables.bzl"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_emit_is_byte_identical_and_round_trips(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(out)]) == 0
    first = _tree(out)
    assert set(first) == {
        ".torchsplit-output",
        "build_variables_split.bzl",
        "report.json",
        "decisions.json",
        "report.md",
        "moves.tsv",
        "moves.sh",
        "include_map.tsv",
        "overlay/core/BUILD.bazel",
        "overlay/third_device/torch_cuda/BUILD.bazel",
        # after moves.sh: the same overlay naming the new paths
        "overlay_moved/build_variables_split.bzl",
        "overlay_moved/core/BUILD.bazel",
        "overlay_moved/third_device/torch_cuda/BUILD.bazel",
        "overlay/tools/layering/BUILD.bazel",
        "overlay/tools/layering/check.bzl",
        "overlay/tools/layering/policy.bzl",
        "overlay/tools/layering/rules.bzl",
    }
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(out)]) == 0
    assert _tree(out) == first
    assert not [p for p in out.rglob("*.tmp")]

    # the split file is valid Starlark whose lists are exactly the per-target decisions
    split = evaluate(out / "build_variables_split.bzl")
    report = json.loads((out / "report.json").read_text())
    decisions = json.loads((out / "decisions.json").read_text())["decisions"]
    by_target: dict[str, list[str]] = {}
    for d in decisions:
        by_target.setdefault(d["target"], []).append(d["source"])
    assert split.lists["torch_cuda_distributed_sources"] == sorted(
        by_target["//third_device/torch_cuda:distributed"]
    )
    assert sum(len(v) for v in split.lists.values()) == report["total_sources"]
    # 4, not 5: inductor's static_launcher/cuda.cpp comes from a CPU list and stays in core
    assert report["counts"]["//third_device/torch_cuda:pybinding"] == 4

    # the overlay parses as Starlark and declares the six module targets
    build = (out / "overlay/third_device/torch_cuda/BUILD.bazel").read_text()
    sl.parse("BUILD.bazel", build, sl.Dialect.extended())
    for module in ("aten", "framework", "jit", "pybinding", "distributed", "profiler"):
        assert f'name = "{module}"' in build
    assert 'load("@rules_cuda//cuda:defs.bzl", "cuda_library")' in build


def test_torchsplit_srcs_helper_makes_labels(tmp_path):
    out = tmp_path / "o"
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(out)]) == 0
    text = (out / "build_variables_split.bzl").read_text()
    text += (
        '\nr = torchsplit_srcs(["third_device/torch_cuda/csrc/a.cu", "torch/x.cpp", ":gen"], '
        '"third_device/torch_cuda")\n'
    )
    probe = tmp_path / "probe.bzl"
    probe.write_text(text)
    assert evaluate(probe).lists["r"] == ["csrc/a.cu", "//:torch/x.cpp", ":gen"]


def test_broken_input_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "build_variables.bzl"
    bad.write_text('a = [\n    "x",\n]\nb = a + 1\n')
    out = tmp_path / "out"
    assert main(["reorg", "emit", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("torchsplit: error: ")
    assert f"{bad}:4:" in err
    assert not out.exists()


def test_report_markdown_and_json(tmp_path, capsys):
    md = tmp_path / "r.md"
    assert main(["reorg", "report", str(FIXTURE), "-o", str(md)]) == 0
    text = md.read_text()
    assert "| `//third_device/torch_cuda:distributed` | 8 |" in text
    assert "### cuda-in-core-list" in text
    # the first page argues: before/after table and needs-a-human before the appendix
    assert (
        text.index("before and after") < text.index("## Needs a human") < text.index("# Appendix")
    )
    assert "hooks-interface-stays-in-core" in text
    assert main(["reorg", "report", str(FIXTURE), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {f["kind"] for f in data["flags"]} >= {
        "cuda-in-core-list",
        "in-two-lists",
        "duplicate-in-list",
        "list-without-rule",
    }
    assert sum(f["kind"] == "cuda-in-core-list" for f in data["flags"]) == 5
    decision = next(d for d in data["decisions"] if d["source"].endswith("NanCheck.cu"))
    assert decision["rule"] == "cuda-distributed" and decision["lines"]


def test_strict_classify_exits_1_when_flagged(capsys):
    assert main(["reorg", "classify", str(FIXTURE), "--strict"]) == 1
    assert main(["reorg", "classify", str(FIXTURE)]) == 0


def test_evaluate_subcommand_lists_counts(capsys):
    assert main(["reorg", "evaluate", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    assert "libtorch_sources(): " in out
    assert "skipped function libtorch_generated_sources" in out
    assert "stub native.read_config('fbcode', 'caffe2_enable_flatbuffer', None) -> None" in out
