"""bench/run_all.py runs end to end on tiny inputs, so the harness cannot rot unseen."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from builds import REPO

sys.path.insert(0, str(REPO / "bench"))

import run_all


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "bench" / "run_all.py"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


@pytest.mark.bazel
def test_tiny_run_writes_every_tiny_section(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    proc = _run("--tiny", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-4000:]
    doc = out.read_text()
    tiny = [s for s in run_all.SECTIONS if s.has_tiny]
    assert {"query", "toolkit"} <= {s.key for s in tiny}
    for section in tiny:
        assert f". {section.title}\n" in doc
    assert "Not measured" not in doc
    # Section 4 on the synthetic tree (its WORKSPACE once failed to load): a real
    # query answer, and an empty audit.
    row = next(line for line in doc.splitlines() if line.startswith("| synthetic"))
    assert "targets)" in row and "(0 violations)" in row, row
    assert "| 13.5.37 | `tools/cuda/requirements_lock_13_5.txt` | 8 |" in doc


def test_unknown_section_is_a_usage_error(tmp_path: Path) -> None:
    proc = _run("--only", "nosuch", "--out", str(tmp_path / "b.md"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("torchsplit: error: --only: no section 'nosuch'")
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "b.md").exists()


def test_a_failing_section_is_reported_and_the_others_still_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(work: Path, tiny: bool) -> str:
        raise RuntimeError("bazel exploded")

    sections = [
        run_all.Section("boom", "Always fails", "note\n", boom, has_tiny=True),
        run_all.Section("fine", "Works", "note\n", lambda w, t: f"| ok | {w.name} |", True),
    ]
    monkeypatch.setattr(run_all, "SECTIONS", sections)
    out = tmp_path / "b.md"
    assert run_all.main(["--tiny", "--out", str(out)]) == 1
    doc = out.read_text()
    assert "## 1. Always fails" in doc
    assert "*Not measured: the benchmark failed (RuntimeError: bazel exploded).*" in doc
    assert "## 2. Works" in doc and "| ok | fine |" in doc


def test_replace_updates_chosen_sections_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sections = [
        run_all.Section("one", "One", "note one\n", lambda w, t: "| new one |", True),
        run_all.Section("two", "Two", "note two\n", lambda w, t: "| new two |", True),
    ]
    monkeypatch.setattr(run_all, "SECTIONS", sections)
    out = tmp_path / "b.md"
    out.write_text(
        "# Build benchmarks\n\nold header\n\n## 1. One\n\n| old one |\n\n"
        "## 2. Affected targets (another script's)\n\n| theirs |\n\n## 3. Two\n\n| old two |\n"
    )
    assert run_all.main(["--tiny", "--only", "two", "--replace", "--out", str(out)]) == 0
    doc = out.read_text()
    assert "old header" not in doc  # the header is regenerated
    assert "| old one |" in doc and "| theirs |" in doc and "| new two |" in doc
    assert "| old two |" not in doc
    assert [line for line in doc.splitlines() if line.startswith("## ")] == [
        "## 1. One",
        "## 2. Two",
        "## 3. Affected targets (another script's)",
    ]


def test_replace_keeps_another_scripts_markers_with_its_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bench_affected.py rewrites only what lies between its markers; losing the begin
    # marker (it sits above the heading, after the previous section's table) made
    # the next run append a second copy of its section.
    sections = [run_all.Section("one", "One", "note one\n", lambda w, t: "| new one |", True)]
    monkeypatch.setattr(run_all, "SECTIONS", sections)
    out = tmp_path / "b.md"
    out.write_text(
        "# Build benchmarks\n\n## 1. One\n\n| old one |\n\n<!-- theirs:begin -->\n"
        "## Theirs\n\n| theirs |\n<!-- theirs:end -->\n"
    )
    assert run_all.main(["--tiny", "--only", "one", "--replace", "--out", str(out)]) == 0
    doc = out.read_text()
    assert "| new one |" in doc and "| old one |" not in doc
    assert doc.count("<!-- theirs:begin -->") == 1 and doc.count("<!-- theirs:end -->") == 1
    assert doc.index("| new one |") < doc.index("<!-- theirs:begin -->") < doc.index("## 2. Theirs")


def test_replace_keeps_a_failed_sections_earlier_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bench_ops without a wheel in dist/ once replaced section 6's table with its error.
    def boom(work: Path, tiny: bool) -> str:
        raise RuntimeError("no torch_core wheel in dist/")

    sections = [run_all.Section("one", "One", "note one\n", boom, True)]
    monkeypatch.setattr(run_all, "SECTIONS", sections)
    out = tmp_path / "b.md"
    out.write_text("# Build benchmarks\n\n## 1. One\n\n| old one |\n")
    assert run_all.main(["--tiny", "--only", "one", "--replace", "--out", str(out)]) == 1
    doc = out.read_text()
    assert "| old one |" in doc
    assert "Not measured" not in doc
