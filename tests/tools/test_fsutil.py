"""The one output helper every torchsplit command writes through (torchsplit.fsutil)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import OWNER_MARK, write_output, write_tree


def test_a_character_device_is_written_through_not_replaced(null_device: Path) -> None:
    write_output(null_device, "discarded\n")
    assert stat.S_ISCHR(null_device.stat().st_mode)
    assert null_device.stat().st_rdev == os.makedev(1, 3)


def test_a_symlink_to_a_device_keeps_both(null_device: Path, tmp_path: Path) -> None:
    link = tmp_path / "out.txt"
    link.symlink_to(null_device)
    write_output(link, "discarded\n")
    assert link.is_symlink()
    assert stat.S_ISCHR(null_device.stat().st_mode)


def test_a_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write_output(fifo, "through the pipe\n")
    reader.join(timeout=10)
    assert received == ["through the pipe\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_regular_files_are_replaced_with_the_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    old = os.umask(0o022)
    try:
        write_output(target, "one\n")
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        os.umask(0o077)
        write_output(target, "two\n")
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
    finally:
        os.umask(old)
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]


def test_a_missing_parent_is_an_error_unless_asked_for(tmp_path: Path) -> None:
    with pytest.raises(TorchsplitError, match="does not exist; create it first"):
        write_output(tmp_path / "nope" / "x.txt", "x")
    assert not (tmp_path / "nope").exists()
    write_output(tmp_path / "made" / "x.txt", "x", make_parents=True)
    assert (tmp_path / "made" / "x.txt").read_text() == "x"


def test_a_directory_in_the_way_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(TorchsplitError, match="is a directory"):
        write_output(tmp_path / "d", "x")


def test_an_unwritable_directory_is_an_error_naming_the_path(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(TorchsplitError, match="locked"):
        write_output(locked / "x.txt", "x")


def test_write_tree_replaces_the_whole_set(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "1", "sub/b.txt": "2", "stale.txt": "old"})
    write_tree(out, {"a.txt": "3", "sub/b.txt": "4"})
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        OWNER_MARK,
        "a.txt",
        "sub/b.txt",
    ]
    assert (out / "a.txt").read_text() == "3"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_failed_write_tree_leaves_the_previous_set(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "first"})

    class Boom(Exception):
        pass

    class Exploding(dict[str, str]):
        def __getitem__(self, key: str) -> str:
            if key == "z.txt":
                raise Boom
            return super().__getitem__(key)

    with pytest.raises(Boom):
        write_tree(out, Exploding({"a.txt": "second", "z.txt": "never"}))
    assert (out / "a.txt").read_text() == "first"
    assert not (out / "z.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_write_tree_refuses_a_directory_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "keep.cpp").write_text("int main() {}\n")
    with pytest.raises(TorchsplitError, match="did not write"):
        write_tree(tmp_path / "src", {"a.txt": "x"})
    assert (tmp_path / "src" / "keep.cpp").exists()


def test_write_tree_refuses_names_that_escape(tmp_path: Path) -> None:
    with pytest.raises(TorchsplitError, match="escapes"):
        write_tree(tmp_path / "out", {"../evil": "x"})
    assert not (tmp_path / "evil").exists()
