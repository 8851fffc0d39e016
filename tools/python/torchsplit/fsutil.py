"""Writing outputs safely: one file, or a whole output directory, for every command.

Two promises, the same for every subcommand:

* A regular file (or a path that does not exist yet) is replaced atomically: readers
  see the old content or the new, never half. The new file gets the mode an ordinary
  ``open()`` would give it (``0o666`` less the umask), not ``mkstemp``'s 0600.
* Anything else that already exists at the path (``/dev/null``, a FIFO, a character
  device, a symlink to one) is *written through*: opened and written like a shell
  redirection would, never replaced. Replacing ``/dev/null`` as root breaks the
  whole machine.

An output *set* (``write_tree``, ``replace_directory``) is built in a temporary sibling
directory and renamed into place, so a failed run leaves the previous outputs as they
were and no stale file of an earlier run survives beside fresh ones. A directory
torchsplit did not write, or one with files a user added since, is never replaced
without ``--force``; a killed run's temporaries are removed at once by a watchdog
process (``_Watchdog``), or, should it die too, by the next run.

Every OS-level problem becomes a :class:`TorchsplitError` naming the path.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from torchsplit.errors import TorchsplitError

# Written into every directory write_tree creates, listing what it wrote; a directory
# without it that is not empty is someone else's and is never replaced.
OWNER_MARK = ".torchsplit-output"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _io_error(path: Path | str, exc: OSError, doing: str) -> TorchsplitError:
    reason = exc.strerror or str(exc)
    return TorchsplitError(f"cannot {doing}: {reason}", path=str(path))


def is_special(path: Path) -> bool:
    """True when ``path`` exists (following symlinks) and is not a regular file or directory."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_output(
    path: str | os.PathLike[str],
    text: str,
    *,
    make_parents: bool = False,
    executable: bool = False,
) -> None:
    """Write ``text`` (UTF-8, LF newlines) to ``path`` as the module docstring describes.

    The parent directory must exist unless ``make_parents`` is set: a mistyped ``-o``
    should fail, not quietly create a tree. ``executable`` gives a new file ``0o777``
    less the umask (a script), instead of ``0o666``.
    """
    target = Path(path)
    if is_special(target):
        try:
            with open(target, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        except OSError as exc:
            raise _io_error(target, exc, "write") from exc
        return
    if target.is_dir():
        raise TorchsplitError("is a directory; expected a file path", path=str(target))
    parent = target.parent
    if not parent.is_dir():
        if not make_parents:
            raise TorchsplitError(
                f"the directory {str(parent)!r} does not exist; create it first",
                path=str(target),
            )
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _io_error(parent, exc, "create the directory") from exc
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise _io_error(target, exc, "write") from exc
    try:
        os.fchmod(fd, (0o777 if executable else 0o666) & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise _io_error(target, exc, "write") from exc
    except BaseException:
        _unlink_quietly(tmp)
        raise


def write_tree(
    out_dir: str | os.PathLike[str],
    files: Mapping[str, str],
    *,
    executable: Collection[str] = (),
    force: bool = False,
) -> None:
    """Replace the directory ``out_dir`` by exactly ``files`` (relative path -> text);
    the names in ``executable`` are written as scripts (see ``write_output``).

    The set is written into a temporary sibling directory, then renamed into place
    (``replace_directory``, which says what is refused and what ``force`` overrides).
    """
    for rel in files:
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise TorchsplitError(f"output name {rel!r} escapes the output directory")

    def fill(staging: Path) -> None:
        for rel in sorted(files):
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            write_output(dest, files[rel], executable=rel in executable)

    replace_directory(out_dir, fill, force=force)


def _manifest(root: Path, mark: str) -> list[str]:
    """Files under ``root`` a later run would replace: all but the mark, git's own
    directory and Bazel's convenience symlinks (``bazel-*``) at the top."""
    out = []
    for dirpath, dirnames, names in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d != ".git" and not d.startswith("bazel-")]
            names = [n for n in names if not n.startswith("bazel-")]
        for name in names:
            rel = (rel_dir / name).as_posix()
            if rel != mark:
                out.append(rel)
    return sorted(out)


def _read_mark(path: Path) -> dict[str, object] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return {"files": None}  # an older torchsplit's mark: a one-line note
    return data if isinstance(data, dict) else {"files": None}


def _git_state(root: Path) -> tuple[str, str] | None:
    """(HEAD, porcelain status) of a git repository at ``root``, None when it is none."""
    if not (root / ".git").exists():
        return None

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
        return proc.stdout.strip()

    return git("rev-parse", "HEAD"), git("status", "--porcelain", "--untracked-files=all")


def _check_replaceable(target: Path, mark: str, kind: str, force: bool) -> None:
    """Refuses to replace what torchsplit did not write, or what a user changed since."""
    if force or not target.exists():
        return
    if not target.is_dir():
        raise TorchsplitError("exists and is not a directory", path=str(target))
    if not any(target.iterdir()):
        return
    found = _read_mark(target / mark)
    if found is None:
        raise TorchsplitError(
            f"is a non-empty directory that torchsplit did not write (no {mark}); choose "
            f"an empty or new directory, or pass --force to replace it with the {kind}",
            path=str(target),
        )
    written = found.get("files")
    if isinstance(written, list):
        extra = sorted(set(_manifest(target, mark)) - set(written))
        if extra:
            shown = ", ".join(extra[:8]) + (f" and {len(extra) - 8} more" if len(extra) > 8 else "")
            raise TorchsplitError(
                f"has {len(extra)} file(s) the last torchsplit run did not write ({shown}); "
                "replacing it would delete them: move them away, or pass --force",
                path=str(target),
            )
    state = _git_state(target)
    if state is not None:
        head, status = state
        if status or (found.get("head") and head != found.get("head")):
            what = "uncommitted changes" if status else f"commits after {found.get('head')}"
            raise TorchsplitError(
                f"is a git repository with {what}; replacing it would lose them: "
                "push or move them, or pass --force",
                path=str(target),
            )


@contextmanager
def _parent_locked(parent: Path) -> Iterator[None]:
    """One writer per output parent at a time (flock on the directory itself, so no lock
    file is left behind)."""
    fd = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextmanager
def _terminations_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise (as Ctrl-C does) so that cleanup runs; SIGKILL cannot be
    caught, and the next run removes what it left (``_remove_leftovers``)."""

    def handler(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


# The watchdog's program: it reads its stdin to the end. "done" means the run finished
# and cleaned up after itself; anything else (end of file without it: the run was killed,
# even by SIGKILL, which no handler sees) means clean up for it, under the parent's lock:
# put a swapped-out previous output back ("old PATH", when the target is gone) or remove
# it, and remove the half-written staging directory.
_WATCHDOG = """
import fcntl, os, shutil, sys
parent, staging, target = sys.argv[1:4]
lines = sys.stdin.read().splitlines()
if "done" not in lines:
    fd = os.open(parent, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    for line in lines:
        if line.startswith("old "):
            old = line[4:]
            if os.path.isdir(old) and not os.path.lexists(target):
                os.rename(old, target)
            else:
                shutil.rmtree(old, ignore_errors=True)
    if os.path.isdir(staging) and not os.path.islink(staging):
        shutil.rmtree(staging, ignore_errors=True)
"""


class _Watchdog:
    """A small process that outlives a killed run and removes its temporaries at once, so
    that not even SIGKILL leaves ``.NAME.*.new`` beside the output. In a session of its own:
    a signal to the run's process group does not reach it."""

    def __init__(self, parent: Path, staging: Path, target: Path) -> None:
        self._proc: subprocess.Popen[bytes] | None
        try:
            argv = [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(parent), str(staging)]
            self._proc = subprocess.Popen(
                [*argv, str(target)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self._proc = None  # no watchdog: the next run removes the leftovers

    def tell(self, line: str) -> None:
        if self._proc is not None and self._proc.stdin is not None:
            try:
                self._proc.stdin.write(line.encode() + b"\n")
                self._proc.stdin.flush()
            except OSError:
                pass

    def done(self) -> None:
        """The run cleaned up after itself (or succeeded): the watchdog exits, touching nothing."""
        if self._proc is None:
            return
        self.tell("done")
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait()


def _remove_leftovers(parent: Path, name: str) -> None:
    """Temporary siblings of a run that was killed (under the lock, so none is live)."""
    for pattern in (f".{name}.*.new", f".{name}.*.old"):
        for path in parent.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)


def replace_directory(
    out_dir: str | os.PathLike[str],
    build: Callable[[Path], None],
    *,
    force: bool = False,
    kind: str = "outputs",
    mark: str = OWNER_MARK,
) -> None:
    """Replace the directory ``out_dir`` by what ``build(staging)`` writes into an empty
    temporary sibling; only when it returns is the result renamed into place.

    * A symlinked ``out_dir`` stays a symlink: the directory it points to is replaced.
    * Refused without ``force``: a non-empty directory torchsplit did not write (no
      ``mark``), one holding files the last run did not write, and a git repository
      with uncommitted changes or commits of its own since.
    * The mark records what was written (and a repository's HEAD) for the next run.
    * A failed, interrupted or terminated run removes its temporary directory and leaves
      the previous ``out_dir`` as it was; a killed run's (SIGKILL) are removed at once by
      its watchdog process, the previous set put back if it was moved aside, and by the
      next run should the watchdog be gone too.
    """
    target = Path(out_dir)
    if target.is_symlink():
        target = target.resolve()
    if target.exists() and not target.is_dir():
        raise TorchsplitError("exists and is not a directory", path=str(target))
    parent = target.parent
    if not parent.is_dir():
        raise TorchsplitError(
            f"the directory {str(parent)!r} does not exist; create it first", path=str(out_dir)
        )
    with _parent_locked(parent), _terminations_raise():
        _remove_leftovers(parent, target.name)
        _check_replaceable(target, mark, kind, force)
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".new", dir=parent))
        except OSError as exc:
            raise _io_error(target, exc, "create a directory beside") from exc
        watchdog = _Watchdog(parent, staging, target)
        try:
            os.chmod(staging, 0o777 & ~_umask())
            build(staging)
            record: dict[str, object] = {"kind": kind, "files": _manifest(staging, mark)}
            state = _git_state(staging)
            if state is not None:
                record["head"] = state[0]
            (staging / mark).parent.mkdir(parents=True, exist_ok=True)
            write_output(staging / mark, json.dumps(record, indent=0) + "\n")
            _swap_into_place(staging, target, watchdog)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise _io_error(target, exc, "write the output directory") from exc
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        finally:
            watchdog.done()


def _swap_into_place(staging: Path, target: Path, watchdog: _Watchdog) -> None:
    if not target.exists():
        os.rename(staging, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rmdir(old)
    watchdog.tell(f"old {old}")
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
