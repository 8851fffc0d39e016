"""The self-check: classification of a self-style build_variables.bzl vs recorded bazel query."""

import json
from pathlib import Path

import pytest

from torchsplit.cli import main
from torchsplit.errors import TorchsplitError
from torchsplit.reorg.selfcheck import label_to_path, parse_query_output

HERE = Path(__file__).parent
BZL = HERE / "fixtures" / "selfrepo" / "build_variables.bzl"
RULES = HERE.parents[1] / "tools" / "reorg" / "torchsplit_self.toml"
OK = HERE / "fixtures" / "selfrepo" / "query_ok.txt"
BAD = HERE / "fixtures" / "selfrepo" / "query_bad.txt"


def _check(query: str, capsys) -> tuple[int, str]:
    code = main(
        [
            "reorg",
            "check",
            "--build-variables",
            str(BZL),
            "--rules",
            str(RULES),
            "--bazel-query-output",
            query,
        ]
    )
    return code, capsys.readouterr().out


def test_agreeing_build_files_pass(capsys):
    code, out = _check(str(OK), capsys)
    assert code == 0
    assert "classification and BUILD files agree" in out
    assert "//third_device/torch_emu:aten: ok" in out


def test_mismatch_exits_1_and_names_each_file(capsys):
    code, out = _check(str(BAD), capsys)
    assert code == 1
    assert (
        "//third_device/torch_cuda:aten: MISMATCH\n"
        "  - listed for it but not in its srcs: third_device/torch_cuda/csrc/aten/Copy.cpp"
    ) in out
    assert (
        "+ in its srcs but classified elsewhere: third_device/torch_cuda/csrc/aten/Copy.cpp" in out
    )


def test_json_query_output(tmp_path, capsys):
    sections = parse_query_output(OK.read_text(), "ok")
    data = {
        t: [f"//{p.split('/', 1)[0]}:{p.split('/', 1)[1]}" for p in sorted(paths)]
        for t, paths in sections.items()
    }
    path = tmp_path / "q.json"
    path.write_text(json.dumps(data))
    code, _ = _check(str(path), capsys)
    assert code == 0
    data["//core:_C"] = []
    path.write_text(json.dumps(data))
    code, out = _check(str(path), capsys)
    assert code == 1 and "core/python/Module.cpp" in out


def test_labels_to_paths():
    assert label_to_path("//core:aten/native/BinaryOps.cpp") == "core/aten/native/BinaryOps.cpp"
    assert label_to_path("//core/aten:Context.cpp") == "core/aten/Context.cpp"
    assert label_to_path("//:build_variables.bzl") == "build_variables.bzl"
    assert label_to_path("@local_cuda//:stub.cc") is None


def test_garbage_query_output_is_an_error():
    with pytest.raises(TorchsplitError) as err:
        parse_query_output("//core:a.cpp\n", "q.txt")
    assert err.value.line == 1
    with pytest.raises(TorchsplitError, match="expected a Bazel label"):
        parse_query_output("# target: //core:torch_cpu\nnot a label\n", "q.txt")


def test_runs_bazel_query_per_target_with_argument_lists(tmp_path, capsys):
    # A stand-in bazel: answers `query 'labels(srcs, T)' --output=label` from the recording,
    # and like real Bazel prints "INFO: Empty results" on stderr for an empty answer.
    recorded = parse_query_output(OK.read_text(), "ok")
    table = tmp_path / "answers.json"
    table.write_text(json.dumps({t: sorted(p) for t, p in recorded.items()}))
    fake = tmp_path / "bazel"
    fake.write_text(
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"answers = json.load(open({str(table)!r}))\n"
        "assert sys.argv[1] == 'query' and sys.argv[3] == '--output=label', sys.argv\n"
        "target = sys.argv[2][len('labels(srcs, '):].split(' + ')[0]\n"
        "paths = answers.get(target, [])\n"
        "if not paths:\n"
        "    print('INFO: Empty results', file=sys.stderr)\n"
        "for p in paths:\n"
        "    pkg = '/'.join(p.split('/')[:2]) if p.startswith('third_device/') else 'core'\n"
        "    print('//' + pkg + ':' + p[len(pkg) + 1:])\n"
    )
    fake.chmod(0o755)
    code = main(
        [
            "reorg",
            "check",
            "--build-variables",
            str(BZL),
            "--rules",
            str(RULES),
            "--bazel",
            str(fake),
            "--workspace",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "classification and BUILD files agree" in out
