"""Robustness of the reorg commands at the command line: outputs that are devices or FIFOs
are written through, output sets are replaced as a whole, every I/O problem is one
`torchsplit: error:` line with exit 2, empty input and missing trees are handled."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from torchsplit.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "workspace" / "build_variables.bzl"


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("torchsplit: error: "), err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    "command", [["reorg", "report"], ["reorg", "classify"], ["reorg", "evaluate"]]
)
def test_dash_o_a_private_char_device_keeps_it_a_device(null_device, command):
    assert main([*command, str(FIXTURE), "-o", str(null_device)]) == 0
    assert stat.S_ISCHR(null_device.stat().st_mode)
    assert null_device.stat().st_rdev == os.makedev(1, 3)


def test_scan_dash_o_a_symlink_to_a_device(null_device, tmp_path):
    link = tmp_path / "out.txt"
    link.symlink_to(null_device)
    assert main(["scan", str(FIXTURE.parent), "-o", str(link)]) in (0, 1)
    assert link.is_symlink() and stat.S_ISCHR(null_device.stat().st_mode)


def test_dash_o_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert main(["reorg", "report", str(FIXTURE), "-o", str(fifo)]) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert got and got[0].startswith(b"# torchsplit reorg")


def test_outputs_honour_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        assert main(["reorg", "emit", str(FIXTURE), "--out", str(tmp_path / "e")]) == 0
        assert main(["reorg", "report", str(FIXTURE), "-o", str(tmp_path / "r.md")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "e" / "report.md").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "e" / "moves.sh").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "e").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "r.md").stat().st_mode) == 0o640


def test_stale_files_go_and_a_failed_run_keeps_the_previous_set(tmp_path, capsys):
    out = tmp_path / "e"
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(out)]) == 0
    (out / "moves.tsv").unlink()  # a file of the last run, gone: nothing to keep
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(out)]) == 0
    assert (out / "moves.tsv").exists()
    # A file the last run did not write is someone's: refused, unless --force.
    (out / "notes_of_a_user.txt").write_text("mine\n")
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(out)]) == 2
    assert "notes_of_a_user.txt" in _error(capsys)
    assert (out / "notes_of_a_user.txt").read_text() == "mine\n"
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(out), "--force"]) == 0
    assert not (out / "notes_of_a_user.txt").exists()
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    bad = tmp_path / "bad.bzl"
    bad.write_text("a = [1 +]\n")
    assert main(["reorg", "emit", str(bad), "--out", str(out)]) == 2
    _error(capsys)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".e.")]


def test_a_directory_as_input(tmp_path, capsys):
    assert main(["reorg", "emit", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "is a directory" in _error(capsys)


def test_empty_input_warns_and_is_an_error_under_strict(tmp_path, capsys):
    empty = tmp_path / "empty.bzl"
    empty.write_text("# nothing here\n")
    assert main(["reorg", "classify", str(empty)]) == 0
    assert "torchsplit: warning:" in capsys.readouterr().err
    assert main(["reorg", "classify", str(empty), "--strict"]) == 2
    assert "defines no list" in _error(capsys)


def test_a_missing_source_tree_or_file_list(tmp_path, capsys):
    missing = str(tmp_path / "nope")
    assert main(["reorg", "classify", str(FIXTURE), "--source-tree", missing]) == 2
    assert "--source-tree" in _error(capsys)
    assert main(["reorg", "classify", str(FIXTURE), "--file-list", missing]) == 2
    assert "file list" in _error(capsys)


def test_an_existing_file_as_out(tmp_path, capsys):
    taken = tmp_path / "file"
    taken.write_text("mine\n")
    assert main(["reorg", "emit", str(FIXTURE), "--out", str(taken)]) == 2
    assert "not a directory" in _error(capsys)
    assert taken.read_text() == "mine\n"


def test_an_unwritable_place_for_out_and_dash_o(tmp_path, capsys):
    # /proc refuses new files even to root (a chmod'ed directory would not stop root).
    assert main(["reorg", "emit", str(FIXTURE), "--out", "/proc/torchsplit-out"]) == 2
    assert "/proc/torchsplit-out" in _error(capsys)
    assert main(["reorg", "report", str(FIXTURE), "-o", "/proc/torchsplit.md"]) == 2
    assert "/proc/torchsplit.md" in _error(capsys)
    assert main(["reorg", "report", str(FIXTURE), "-o", str(tmp_path / "no" / "r.md")]) == 2
    assert "does not exist" in _error(capsys)


def test_a_read_only_out_directory(tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes through a read-only mode; the /proc case covers it")
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        assert main(["reorg", "emit", str(FIXTURE), "--out", str(parent / "o")]) == 2
        _error(capsys)
    finally:
        parent.chmod(0o755)
