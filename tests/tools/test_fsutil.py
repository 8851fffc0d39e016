"""The one output helper every torchsplit command writes through (torchsplit.fsutil)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from torchsplit.checkout import GIT_IDENTITY
from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import OWNER_MARK, replace_directory, write_output, write_tree


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


def test_a_killed_runs_temporaries_are_removed_by_the_next(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "1"})
    (tmp_path / ".out.k1ll3d.new" / "half").mkdir(parents=True)  # SIGKILL while writing
    (tmp_path / ".out.k1ll3d.old").mkdir()  # SIGKILL while swapping
    (tmp_path / ".other.x.new").mkdir()  # another output's: not ours to touch
    write_tree(out, {"a.txt": "2"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.x.new", "out"]


def test_a_terminated_run_cleans_up_and_keeps_the_previous_set(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "first"})

    def killed(staging: Path) -> None:
        (staging / "a.txt").write_text("half")
        os.kill(os.getpid(), signal.SIGTERM)  # `kill PID` from outside, mid-run

    with pytest.raises(KeyboardInterrupt):
        replace_directory(out, killed)
    assert (out / "a.txt").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # handler restored


KILLED_RUN = """
import os, sys, time
from pathlib import Path
from torchsplit.fsutil import replace_directory

def build(staging: Path) -> None:
    (staging / "a.txt").write_text("half")
    if sys.argv[2] == "swap":  # stop between moving the old set aside and the new into place
        import torchsplit.fsutil as fsutil
        real = os.rename
        def rename(src, dst):
            real(src, dst)
            if str(dst).endswith(".old"):
                print("swapping", flush=True)
                time.sleep(60)
        fsutil.os.rename = rename
    else:
        print("writing", flush=True)
        time.sleep(60)

replace_directory(sys.argv[1], build)
"""


@pytest.mark.parametrize("moment", ["write", "swap"])
def test_a_sigkilled_run_leaves_nothing_beside_the_output(tmp_path: Path, moment: str) -> None:
    """SIGKILL reaches no handler: the watchdog removes the half-written set at once (and,
    killed mid-swap, puts the previous set back), before any next run."""
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "first"})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "tools/python")}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(out), moment],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() in ("writing", "swapping")
    assert any(p.name.endswith((".new", ".old")) for p in tmp_path.iterdir())
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sorted(p.name for p in tmp_path.iterdir()) != ["out"]:
        time.sleep(0.05)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "a.txt").read_text() == "first"


def test_a_symlinked_out_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    link = tmp_path / "link"
    write_tree(real, {"a.txt": "1"})
    link.symlink_to(real)
    write_tree(link, {"a.txt": "2"})
    assert link.is_symlink() and link.resolve() == real
    assert (real / "a.txt").read_text() == "2"


def test_files_a_user_added_are_never_deleted_silently(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "1", "sub/b.txt": "2"})
    (out / "sub" / "mine.md").write_text("notes")
    with pytest.raises(TorchsplitError, match=r"1 file\(s\) the last torchsplit run did not"):
        write_tree(out, {"a.txt": "3"})
    assert (out / "sub" / "mine.md").read_text() == "notes"
    write_tree(out, {"a.txt": "3"}, force=True)
    assert not (out / "sub").exists()


def test_a_git_repository_with_changes_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "repo"

    def repo(staging: Path) -> None:
        (staging / "f.txt").write_text("x\n")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "m"]):
            subprocess.run(["git", *GIT_IDENTITY, *args], cwd=staging, check=True)

    replace_directory(out, repo, mark=".git/torchsplit-output")
    replace_directory(out, repo, mark=".git/torchsplit-output")  # clean: replaced
    (out / "f.txt").write_text("edited\n")
    with pytest.raises(TorchsplitError, match="uncommitted changes"):
        replace_directory(out, repo, mark=".git/torchsplit-output")
    subprocess.run(["git", *GIT_IDENTITY, "commit", "-qam", "mine"], cwd=out, check=True)
    with pytest.raises(TorchsplitError, match="commits after"):
        replace_directory(out, repo, mark=".git/torchsplit-output")
    replace_directory(out, repo, mark=".git/torchsplit-output", force=True)
    assert (out / "f.txt").read_text() == "x\n"
