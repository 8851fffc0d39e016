"""Regression tests for issue 15: each false positive/miss of the scanner, ROCm parity,
the --plan work list and robustness on odd trees. Fixtures under fixtures/scan_cases are
invented lines that only mirror the shapes found in real PyTorch headers."""

import json
import os
import stat
from collections import Counter
from pathlib import Path

import pytest

from torchsplit import vendors
from torchsplit.cli import main
from torchsplit.scan import scanner
from torchsplit.scan import words as scan_words
from torchsplit.scan.scanner import scan_c_text, scan_python_text, scan_tree

CASES = Path(__file__).parent / "fixtures" / "scan_cases"


@pytest.fixture(scope="module")
def half():
    path = CASES / "ATen" / "native" / "HalfMath.h"
    found = scan_c_text(path.read_text(), "ATen/native/HalfMath.h")
    return found


def _at(found, line):
    return [f for f in found if f.line == line]


def test_rocm_conditional_carries_every_category_and_labels_each_branch(half):
    (cond,) = _at(half, 12)
    assert cond.categories == ("use-cuda-guard", "cuda-compiler-macro")
    assert cond.families == ("cuda", "rocm")
    assert cond.span == (12, 18)  # the whole #if .. #endif, not just the first branch
    assert cond.branches == ((12, 14, "ROCm side"), (14, 16, "CUDA side"), (16, 18, "other"))
    # the #elif and #else lines are not reported again
    assert not _at(half, 14) and not _at(half, 16)


def test_category_filter_finds_rocm_guard_filed_with_compiler_macro(capsys):
    code = main(
        [
            "scan",
            str(CASES / "ATen"),
            "--base",
            str(CASES),
            "--categories",
            "use-cuda-guard",
            "--format",
            "json",
        ]
    )
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["line"]) for f in data["findings"]] == [("ATen/native/HalfMath.h", 12)]


def test_tokens_inside_define_bodies_keep_their_physical_columns(half):
    assert [(f.line, f.column, f.category) for f in _at(half, 26)] == [(26, 17, "is-cuda")]
    assert [(f.line, f.column, f.category) for f in _at(half, 27)] == [(27, 32, "device-type-cuda")]


def test_false_positives_are_gone(half):
    # a constant that starts with kCUDA is not a device type: a vendor-named identifier
    assert [f.category for f in _at(half, 20)] == ["vendor-identifier"]
    # THConcat is not the THC library
    assert _at(half, 5) == []
    # a template parameter named is_cuda tests nothing
    assert [f.category for f in _at(half, 22)] == ["vendor-identifier"]
    # an upper-case "CUDA" label is not a device string
    assert [f.category for f in _at(half, 37)] == ["cuda-mention"]


def test_include_guard_named_like_thc_is_not_a_cuda_guard():
    text = (CASES / "ATen" / "native" / "StorageGuard.h").read_text()
    assert scan_c_text(text, "StorageGuard.h") == []


@pytest.mark.parametrize(
    ("line", "name", "family"),
    [
        (30, "CUFFT_CHECK", "cuda"),
        (31, "MIOPEN_CHECK", "rocm"),
        (32, "TORCH_HIPBLASLT_CHECK", "rocm"),
        (33, "C10D_NCCL_CHECK", "cuda"),
        (34, "C10_LIBCUDA_DRIVER_API_REQUIRED", "cuda"),
    ],
)
def test_check_macros(half, line, name, family):
    hits = [f for f in _at(half, line) if f.category == "cuda-api-macro"]
    assert [(f.message, f.families) for f in hits] == [(f"uses {name}", (family,))]


def test_rocm_parity_includes_device_types_and_macros(half):
    cats = {(f.line, f.category, f.families) for f in half}
    assert {
        (3, "backend-include", ("rocm",)),  # <ATen/hip/...cuh>: a hip/ directory
        (6, "cuda-include", ("rocm",)),
        (7, "backend-include", ("rocm",)),
        (8, "cuda-include", ("rocm",)),
        (9, "cuda-include", ("rocm",)),
        (10, "cuda-include", ("cuda",)),  # <nvml.h>
        (35, "device-type-cuda", ("rocm",)),  # kHIP
        (36, "device-type-cuda", ("rocm",)),  # DeviceType::HIP
        (41, "cuda-compiler-macro", ("rocm",)),  # __HIP__
    } <= cats


def test_relative_include_resolves_against_the_including_file(half):
    (inc,) = _at(half, 4)
    assert inc.category == "backend-include"
    assert "ATen/cuda/ReduceHelper.cuh" in inc.message


def test_vendor_api_and_dlopen(half):
    assert ("vendor-api", "uses cuLaunchKernel") in {(f.category, f.message) for f in half}
    assert [f.category for f in _at(half, 38)] == ["dlopen"]


def test_no_word_prefilter_loses_hip_device_compile():
    result = scan_tree([str(CASES / "ATen" / "native" / "DeviceCompileOnly.h")], base=str(CASES))
    (finding,) = result.findings
    assert finding.category == "cuda-compiler-macro" and finding.families == ("rocm",)


def test_prefilter_is_complete_for_the_vocabulary():
    # every vocabulary word, library and compiler/driver spelling passes the byte-level
    # test and is found as a vendor identifier
    words = [
        w
        for t in (vendors.SOURCE_PREFIX_WORDS, vendors.SOURCE_EXACT_WORDS)
        for ws in t.values()
        for w in ws
    ]
    libs = [f"lib{lib}.so" for v in vendors.VENDORS for lib in v.libraries]
    for token in [*words, *libs, "__HIP_DEVICE_COMPILE__", "cuInit", "CUresult", "THCState"]:
        text = f"x {token} y"
        assert scan_words.first_candidate(text.encode()) is not None, token
        assert scan_words.vendor_spans(text), token
    # a vendor substring inside an ordinary word is a candidate, never a vendor identifier
    text = "the relationship of a cube to a chip"
    assert scan_words.first_candidate(text.encode()) is not None
    assert len(scan_words.vendor_spans(text)) == 0


def test_python_f_string_device_and_uppercase_label():
    text = (CASES / "torch" / "ranks.py").read_text()
    found = {(f.line, f.category) for f in scan_python_text(text, "ranks.py")}
    assert found == {(2, "cuda-device-string"), (3, "cuda-mention")}


def test_family_flag_switches_views(capsys):
    main(["scan", str(CASES), "--base", str(CASES), "--family", "rocm", "--format", "json"])
    rocm = json.loads(capsys.readouterr().out)["findings"]
    assert rocm and all("rocm" in f["families"] for f in rocm)
    main(["scan", str(CASES), "--base", str(CASES), "--family", "cuda", "--format", "json"])
    cuda = json.loads(capsys.readouterr().out)["findings"]
    assert cuda and all("cuda" in f["families"] for f in cuda)
    assert {f["line"] for f in rocm if f["path"].endswith("HalfMath.h")} != {
        f["line"] for f in cuda if f["path"].endswith("HalfMath.h")
    }


# --- robustness -------------------------------------------------------------------------


def test_fifo_is_skipped_with_a_note(tmp_path, capsys):
    (tmp_path / "ok.h").write_text("#ifdef USE_CUDA\n#endif\n")
    os.mkfifo(tmp_path / "pipe.h")
    assert main(["scan", str(tmp_path), "--base", str(tmp_path)]) == 1  # did not hang
    err = capsys.readouterr().err
    assert "note: " in err and "pipe.h: skipped: not a regular file (named pipe)" in err
    assert main(["scan", str(tmp_path / "pipe.h")]) == 0  # given explicitly: skipped too


def test_binary_skipped_and_long_line_truncated(tmp_path, capsys):
    (tmp_path / "blob.h").write_bytes(b"cuda\0" * 1000)
    long_line = "int x = kCUDA;" + " " * 200_000 + "// end\n"
    (tmp_path / "long.h").write_text(long_line)
    result = scan_tree([str(tmp_path / "blob.h"), str(tmp_path)], base=str(tmp_path))
    notes = {i.path: i.message for i in result.all_issues()}
    assert notes == {"blob.h": "skipped: binary file (NUL byte in the first 8 KiB)"}
    (finding,) = result.findings
    assert finding.category == "device-type-cuda"
    assert len(finding.text) <= scanner.TEXT_WIDTH + 6


def test_missing_and_unreadable_paths_reported_rest_scanned(tmp_path, capsys, monkeypatch):
    (tmp_path / "ok.h").write_text("#ifdef USE_ROCM\n#endif\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path="."):  # root ignores mode bits: make the listing fail as it would
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code = main(["scan", str(tmp_path), str(tmp_path / "missing.h"), "--base", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 2
    assert "ok.h:1:1: use-cuda-guard [rocm]" in captured.out
    assert f"error: {locked}: cannot list: Permission denied" in captured.err
    assert f"error: {tmp_path / 'missing.h'}: No such file or directory" in captured.err


def test_output_refuses_missing_parent_and_honours_umask(tmp_path, capsys):
    src = tmp_path / "a.h"
    src.write_text("#ifdef USE_CUDA\n#endif\n")
    assert main(["scan", str(src), "-o", str(tmp_path / "no" / "out.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err
    old = os.umask(0o027)
    try:
        main(["scan", str(src), "-o", str(tmp_path / "out.txt")])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o640
    main(["scan", str(src), "-o", os.devnull])  # written through, never replaced
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


# --- --max-per-file: bounded findings, exact totals ---------------------------------------

DENSE_LINE = "  if (x.is_cuda()) { cudaMalloc(&p, n); }\n"  # two findings: is-cuda, vendor-api


def _dense(tmp_path: Path, lines: int = 50) -> Path:
    root = tmp_path / "dense"
    root.mkdir()
    (root / "many.cpp").write_text(DENSE_LINE * lines)
    return root


def test_limit_lists_the_first_findings_and_counts_the_rest_exactly(tmp_path, capsys):
    root = _dense(tmp_path)
    assert main(["scan", str(root), "--base", str(root), "--max-per-file", "7"]) == 1
    out, err = capsys.readouterr()
    listed = [line for line in out.splitlines() if line.startswith("many.cpp:")][:-1]
    assert [line.split(": ")[0] for line in listed] == [
        "many.cpp:1:9",
        "many.cpp:1:22",
        "many.cpp:2:9",
        "many.cpp:2:22",
        "many.cpp:3:9",
        "many.cpp:3:22",
        "many.cpp:4:9",
    ]
    assert out.splitlines()[-1] == "many.cpp: 93 more finding(s) not listed (--max-per-file 7)"
    assert "torchsplit scan: 100 finding(s) in 1 file(s); 0 allowlisted" in err
    assert "(93 not listed: --max-per-file 7)" in err

    main(["scan", str(root), "--base", str(root), "--format", "json", "--max-per-file", "7"])
    data = json.loads(capsys.readouterr().out)
    assert data["max_per_file"] == 7
    assert len(data["findings"]) == 7
    assert data["not_listed"] == {
        "many.cpp": {"findings": 93, "categories": {"is-cuda": 46, "vendor-api": 47}, "allowed": 0}
    }
    assert data["summary"] == {".": {"is-cuda": 50, "vendor-api": 50}}

    main(["scan", str(root), "--base", str(root), "--format", "summary", "--max-per-file", "7"])
    assert capsys.readouterr().out.splitlines()[-1].split() == ["TOTAL", "50", "50", "100"]


def test_limit_zero_lists_every_finding(tmp_path, capsys):
    root = _dense(tmp_path)
    main(["scan", str(root), "--base", str(root), "--format", "json", "--max-per-file", "0"])
    data = json.loads(capsys.readouterr().out)
    assert len(data["findings"]) == 100 and data["not_listed"] == {}
    main(["scan", str(root), "--base", str(root), "--max-per-file", "0"])
    assert "not listed" not in capsys.readouterr().out


def test_plan_counts_include_unlisted_findings(tmp_path, capsys):
    root = _dense(tmp_path)
    args = ["scan", "--plan", str(root), "--base", str(root), "--max-per-file", "3"]
    main([*args, "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    (edit,) = data["edits"][0]["files"]
    assert (edit["couplings"], len(edit["findings"]), edit["not_listed"]) == (100, 3, 97)
    assert data["edit_counts"] == {"is-cuda": 50, "vendor-api": 50}
    main(args)
    text = capsys.readouterr().out
    assert text.startswith("EDITS (all): 1 file(s) stay in core with 100 code coupling(s)")
    assert "  many.cpp  [100: " in text
    assert "    many.cpp: 97 more finding(s) not listed (--max-per-file 3)" in text


def test_filters_and_allowlist_apply_before_the_limit(tmp_path, capsys):
    root = _dense(tmp_path)
    args = ["scan", str(root), "--base", str(root), "--format", "json", "--max-per-file", "5"]
    main([*args, "--categories", "vendor-api"])
    data = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["category"]) for f in data["findings"]] == [
        (n, "vendor-api") for n in range(1, 6)
    ]
    assert data["not_listed"]["many.cpp"]["findings"] == 45
    assert data["summary"] == {".": {"vendor-api": 50}}

    allow = tmp_path / "allow.toml"
    allow.write_text(
        '[[allow]]\npath = "many.cpp"\ncategory = "is-cuda"\nreason = "accepted"\n\n'
        '[[allow]]\npath = "gone/**"\ncategory = "*"\nreason = "stale"\n'
    )
    args = ["scan", str(root), "--base", str(root), "--allowlist", str(allow)]
    main([*args, "--format", "json", "--max-per-file", "5"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    # allowlisted findings neither fill the limit nor count in the totals
    assert [(f["line"], f["category"]) for f in data["findings"]] == [
        (n, "vendor-api") for n in range(1, 6)
    ]
    assert data["not_listed"]["many.cpp"] == {
        "findings": 45,
        "categories": {"vendor-api": 45},
        "allowed": 45,
    }
    assert [(f["line"], f["allowlist_entry"]) for f in data["allowed"]] == [
        (n, 1) for n in range(1, 6)
    ]
    assert data["summary"] == {".": {"vendor-api": 50}}
    assert [e["index"] for e in data["unused_allowlist_entries"]] == [2]
    assert "50 finding(s) in 1 file(s); 50 allowlisted" in captured.err
    assert "allowlist entry #2 (gone/**, *) matched nothing" in captured.err
    # an entry used only by findings beyond the limit still counts as used
    main([*args, "--categories", "is-cuda", "--max-per-file", "1"])
    err = capsys.readouterr().err
    assert "0 finding(s) in 0 file(s); 50 allowlisted" in err
    assert "entry #1" not in err


def test_kept_findings_are_the_first_in_sort_order_whatever_the_pass(tmp_path):
    # comments (the last pass) and a conditional (made at its #endif) sort before code
    text = (
        "// cuda here\n" * 4
        + "#ifdef USE_CUDA\n"
        + DENSE_LINE * 6
        + "#endif\n"
        + 'auto s = "cuda:0";\n' * 3
        + "#if defined(__HIPCC__)\nint hipOnly;\n#endif\n"
    )
    everything = sorted(scan_c_text(text, "a.cpp"))
    assert len(everything) > 20
    for limit in (1, 3, 5, 6, 11, len(everything) - 1, len(everything), 100):
        selection = scanner.Selection(max_per_file=limit)
        result = scanner.FileResult("a.cpp")
        scanner._scan_c(text, "a.cpp", None, False, selection).fill(result)
        assert result.findings == everything[:limit]
        assert result.total == len(everything)
        rest = everything[limit:]
        assert result.unlisted.count == len(rest)
        assert result.unlisted.categories == Counter(c for f in rest for c in f.categories)


def test_limit_holds_with_parallel_workers(tmp_path, capsys):
    root = tmp_path / "tree"
    root.mkdir()
    for n in range(70):  # enough files for the process pool
        (root / f"f{n:02}.cpp").write_text(DENSE_LINE * 4)
    allow = tmp_path / "allow.toml"
    allow.write_text('[[allow]]\npath = "f0*.cpp"\ncategory = "*"\nreason = "x"\n')
    args = ["scan", str(root), "--base", str(root), "--allowlist", str(allow)]
    main([*args, "--max-per-file", "2", "-j", "2", "--format", "json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert len(data["findings"]) == 60 * 2 and len(data["allowed"]) == 10 * 2
    assert "480 finding(s) in 60 file(s); 80 allowlisted; 70 file(s) scanned" in captured.err


def test_negative_limit_is_an_error(tmp_path, capsys):
    root = _dense(tmp_path, 1)
    assert main(["scan", str(root), "--max-per-file", "-1"]) == 2
    assert "torchsplit: error: --max-per-file must be 0 (unlimited) or more" in (
        capsys.readouterr().err
    )


def test_finding_has_no_instance_dict():
    (finding,) = scan_c_text("kCUDA;\n", "a.cpp")
    assert not hasattr(finding, "__dict__")


def test_argument_comment_naming_a_vendor_parameter_is_code():
    # f(x, /*is_cuda=*/true) calls the overload whose parameter names CUDA: a CPU kernel
    # asking for CUDA's accumulate type is an edit, not a mention (2.6's
    # cpu/ScatterGatherKernel.cpp was "mentions only" for it)
    text = (
        "auto t = toAccumulateType(s, /*is_cuda=*/true);\n"  # 1: code
        "g(x,\n  /* use_hip = */ false);\n"  # 3: code, after a line break
        "/*is_cuda=*/\n"  # 4: not at an argument: prose
        "h(1); /* cuda tensors here */\n"  # 5: prose
    )
    found = scan_c_text(text, "cpu/Kernel.cpp")
    assert [(f.line, f.column, f.category, f.message, f.families) for f in found] == [
        (1, 30, "vendor-identifier", "passes argument is_cuda", ("cuda",)),
        (3, 3, "vendor-identifier", "passes argument use_hip", ("rocm",)),
        (4, 1, "comment-mention", "comment mentions cuda", ("cuda",)),
        (5, 7, "comment-mention", "comment mentions cuda", ("cuda",)),
    ]
    python = scan_python_text("f(1)  # /*is_cuda=*/\n", "m.py")
    assert [f.category for f in python] == ["comment-mention"]
