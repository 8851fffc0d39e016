"""The coupling scanner on hand-written fixtures, and on the real headers of the torch wheel."""

import importlib.metadata
import importlib.util
import json
import re
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.cli import main
from torchsplit.errors import TorchsplitError
from torchsplit.globs import glob_to_regex
from torchsplit.scan.allowlist import load_allowlist
from torchsplit.scan.scanner import (
    MovedFiles,
    Selection,
    scan_c_text,
    scan_paths,
    scan_python_text,
    scan_tree,
)

SCAN = Path(__file__).parent / "fixtures" / "scan"
PYTORCH_STYLE = Path(__file__).parent / "fixtures" / "pytorch_style" / "build_variables.bzl"


def _by_line(findings):
    return {(f.line, f.category) for f in findings}


@pytest.fixture(scope="module")
def guards():
    path = SCAN / "core" / "guards.cpp"
    return scan_c_text(path.read_text(), "core/guards.cpp")


def test_guard_spans_follow_if_elif_else_nesting(guards):
    # each conditional once, with its whole #if..#endif extent and labelled branches
    spans = {(f.line, f.category): (f.span, f.branches) for f in guards if f.span}
    assert spans == {
        (6, "use-cuda-guard"): (
            (6, 18),
            ((6, 14, "CUDA+ROCm side"), (14, 16, "other"), (16, 18, "other")),
        ),
        (8, "cuda-compiler-macro"): ((8, 12), ((8, 10, "CUDA side"), (10, 12, "other"))),
        (20, "use-cuda-guard"): ((20, 22), ((20, 22, "other"),)),  # #ifndef: the non-CUDA side
        (24, "use-cuda-guard"): ((24, 27), ((24, 27, "CUDA side"),)),  # continued condition
    }
    guard = next(f for f in guards if f.line == 24)
    assert "SOME_FLAG && defined(USE_CUDNN)" in guard.message
    # the USE_MPS #elif and the #else are not CUDA guards
    assert not any(f.line in (14, 16) for f in guards)


def test_code_categories_ignore_comments_and_strings(guards):
    found = _by_line(guards)
    assert {
        (3, "cuda-include"),
        (4, "backend-include"),
        (29, "cuda-api-macro"),
        (32, "is-cuda"),
        (33, "device-type-cuda"),
        (35, "cuda-device-string"),
        (35, "comment-mention"),
        (40, "device-type-cuda"),
        (1, "comment-mention"),
    } <= found
    # kCUDA inside a raw string is a string mention, never a device-type finding
    assert (38, "device-type-cuda") not in found
    assert (38, "cuda-mention") in found
    # "plain string" and the comment's second line name nothing
    assert not any(f.line in (36, 37) for f in guards)


def test_unterminated_conditional_spans_to_end_of_file():
    text = (SCAN / "core" / "unterminated.h").read_text()
    (finding,) = scan_c_text(text, "u.h")
    assert finding.category == "use-cuda-guard"
    assert finding.span == (2, 4)
    assert "no #endif" in finding.message


def test_stray_endif_does_not_crash():
    assert scan_c_text("#endif\n#else\nint x;\n", "s.h") == []


def test_clean_file_has_no_findings():
    assert scan_c_text((SCAN / "core" / "clean.cpp").read_text(), "clean.cpp") == []


def test_python_uses():
    text = (SCAN / "torch" / "use_cuda.py").read_text()
    found = _by_line(scan_python_text(text, "use_cuda.py"))
    assert found == {
        (4, "python-torch-cuda"),
        (4, "comment-mention"),
        (8, "is-cuda"),
        (9, "python-torch-cuda"),
        (10, "python-torch-cuda"),
        (11, "python-torch-cuda"),
        (12, "cuda-device-string"),
    }


def test_includes_of_moving_files():
    moved = MovedFiles.from_sources(["torch/csrc/autograd/functions/comm.cpp"])
    text = (SCAN / "core" / "moved_user.cpp").read_text()
    found = scan_c_text(text, "m.cpp", moved=moved)
    assert [(f.line, f.category) for f in found] == [(1, "moved-include")]
    # a file that itself moves is not flagged for including its siblings
    assert scan_c_text(text, "m.cpp", moved=moved, file_moves=True) == []


def test_moves_from_build_variables_via_cli(capsys):
    code = main(
        [
            "scan",
            str(SCAN / "core" / "moved_user.cpp"),
            "--base",
            str(SCAN),
            "--build-variables",
            str(PYTORCH_STYLE),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "core/moved_user.cpp:1:1: moved-include [cuda]: includes " in out
    assert "torch/csrc/autograd/functions/comm.h" in out


def test_allowlist_glob_category_and_line():
    entries = load_allowlist(SCAN / "allow.toml")
    findings, scanned = scan_paths([str(SCAN)], base=str(SCAN))
    assert scanned == 5
    # The allowlist applies inside the scan, as the CLI runs it.
    result = scan_tree([str(SCAN)], base=str(SCAN), selection=Selection(allow=tuple(entries)))
    assert [(f.path, f.line) for f, _ in result.allowed] == [("core/guards.cpp", 29)]
    assert [e.index for e in entries if e.index not in result.used_entries()] == [2]
    assert len(result.findings) == len(findings) - 1
    assert glob_to_regex("core/**").match("core/a/b.cpp")
    assert glob_to_regex("core/**/x.h").match("core/x.h")
    assert not glob_to_regex("core/*.h").match("core/a/x.h")


def test_allowlist_requires_reason(tmp_path):
    bad = tmp_path / "allow.toml"
    bad.write_text('[[allow]]\npath = "core/**"\ncategory = "is-cuda"\n')
    with pytest.raises(TorchsplitError, match="needs a reason"):
        load_allowlist(bad)
    bad.write_text('[[allow]]\npath = "core/**"\ncategory = "nope"\nreason = "x"\n')
    with pytest.raises(TorchsplitError, match="unknown category 'nope'"):
        load_allowlist(bad)


def test_cli_exit_codes_formats_and_parallel(tmp_path, capsys):
    assert main(["scan", str(SCAN / "core" / "clean.cpp")]) == 0
    assert main(["scan", str(SCAN), "--base", str(SCAN), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["files_scanned"] == 5
    assert data["summary"]["core"]["use-cuda-guard"] == 4
    assert (
        main(
            [
                "scan",
                str(SCAN),
                "--base",
                str(SCAN),
                "--no-comments",
                "--exit-zero",
                "--format",
                "summary",
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "comment-mention" not in table
    assert table.splitlines()[-1].startswith("TOTAL")
    one, _ = scan_paths([str(SCAN)] * 20, base=str(SCAN), jobs=1)
    two, _ = scan_paths([str(SCAN)] * 20, base=str(SCAN), jobs=2)
    assert one == two
    assert main(["scan", str(tmp_path / "missing")]) == 2
    assert "torchsplit scan: error: " in capsys.readouterr().err


# --- the real PyTorch headers shipped in the torch wheel ----------------------------------


@pytest.fixture(scope="module")
def torch_include():
    # Locate the wheel without importing it: only its headers are needed.
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch==2.13.0 wheel not installed")
    include = Path(next(iter(spec.submodule_search_locations))) / "include"
    if not (include / "ATen" / "cuda").is_dir():
        pytest.skip("this torch wheel ships no ATen/cuda headers")
    return include


def test_the_corpus_is_torchs_cpu_build_as_pinned(torch_include):
    # requirements.txt selects the CPU build: PyPI's default Linux wheel is the
    # CUDA one, which brings its own nvidia-* wheels into the virtualenv.
    version = importlib.metadata.version("torch")
    pin = re.search(r"^torch==(\S+)", (REPO / "requirements.txt").read_text(), re.MULTILINE)
    assert pin and pin.group(1).endswith("+cpu") and version == pin.group(1), version
    requires = importlib.metadata.requires("torch") or []
    assert not [r for r in requires if r.lower().startswith("nvidia")], requires


def test_corpus_finds_torch_cuda_cpp_api_in_aten_cuda(torch_include):
    findings, _ = scan_paths([str(torch_include / "ATen" / "cuda")], base=str(torch_include))
    code_uses = [
        f
        for f in findings
        if f.category == "cuda-api-macro" and f.message == "uses TORCH_CUDA_CPP_API"
    ]
    # Independent count: occurrences on lines that are not // comments.
    expected = 0
    for path in (torch_include / "ATen" / "cuda").rglob("*"):
        if path.suffix in (".h", ".cuh", ".hpp"):
            for line in path.read_text(errors="replace").splitlines():
                if not line.lstrip().startswith("//"):
                    expected += line.count("TORCH_CUDA_CPP_API")
    assert expected > 20
    assert len(code_uses) == expected
    assert all(f.path.startswith("ATen/cuda/") for f in code_uses)
    assert any(f.path == "ATen/cuda/CUDAContextLight.h" for f in code_uses)
    general = [f for f in findings if f.path == "ATen/cuda/ATenCUDAGeneral.h"]
    assert "comment-mention" in {f.category for f in general}
    assert "cuda-api-macro" not in {f.category for f in general}


def test_corpus_clean_directories_report_nothing(torch_include):
    # Verified by hand: the only vendor word in them is one comment naming thrust.
    dirs = ["c10/xpu", "ATen/xpu", "ATen/native/mps", "ATen/native/cpu"]
    findings, scanned = scan_paths([str(torch_include / d) for d in dirs], base=str(torch_include))
    assert scanned > 50
    assert [(f.path, f.category) for f in findings] == [
        ("ATen/native/cpu/Loops.h", "comment-mention")
    ]


def test_corpus_guards_in_c10_cuda(torch_include):
    findings, _ = scan_paths([str(torch_include / "c10" / "cuda")], base=str(torch_include))
    guards = [f for f in findings if f.category == "use-cuda-guard"]
    assert guards and all(f.span and f.span[0] == f.line and f.span[1] > f.line for f in guards)
