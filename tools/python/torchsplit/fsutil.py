"""Writing outputs safely: one file, or a whole output directory, for every command.

Two promises, the same for every subcommand:

* A regular file (or a path that does not exist yet) is replaced atomically: readers
  see the old content or the new, never half. The new file gets the mode an ordinary
  ``open()`` would give it (``0o666`` less the umask), not ``mkstemp``'s 0600.
* Anything else that already exists at the path (``/dev/null``, a FIFO, a character
  device, a symlink to one) is *written through*: opened and written like a shell
  redirection would, never replaced. Replacing ``/dev/null`` as root breaks the
  whole machine.

An output *set* (``write_tree``) is built in a temporary sibling directory and renamed
into place, so a failed run leaves the previous outputs as they were and no stale file
of an earlier run survives beside fresh ones.

Every OS-level problem becomes a :class:`TorchsplitError` naming the path.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path

from torchsplit.errors import TorchsplitError

# Written into every directory write_tree creates; a directory without it that is not
# empty is someone else's and is never replaced.
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
) -> None:
    """Replace the directory ``out_dir`` by exactly ``files`` (relative path -> text);
    the names in ``executable`` are written as scripts (see ``write_output``).

    The set is written into a temporary sibling directory first; only when every file is
    written is it renamed into place (the old directory is moved aside, then removed).
    An existing non-empty directory that an earlier ``write_tree`` did not create is
    refused, so pointing ``--out`` at a source tree cannot wipe it.
    """
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise TorchsplitError("exists and is not a directory", path=str(target))
    if target.is_dir() and any(target.iterdir()) and not (target / OWNER_MARK).exists():
        raise TorchsplitError(
            f"is a non-empty directory that torchsplit did not write (no {OWNER_MARK}); "
            "choose an empty or new directory",
            path=str(target),
        )
    parent = target.parent
    if not parent.is_dir():
        raise TorchsplitError(
            f"the directory {str(parent)!r} does not exist; create it first", path=str(target)
        )
    for rel in files:
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise TorchsplitError(f"output name {rel!r} escapes the output directory")
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".new", dir=parent))
    except OSError as exc:
        raise _io_error(target, exc, "create a directory beside") from exc
    try:
        os.chmod(staging, 0o777 & ~_umask())
        for rel in sorted(files):
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            write_output(dest, files[rel], executable=rel in executable)
        write_output(staging / OWNER_MARK, "written by torchsplit; replaced as a whole\n")
        _swap_into_place(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise _io_error(target, exc, "write the output directory") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap_into_place(staging: Path, target: Path) -> None:
    if not target.exists():
        os.rename(staging, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rmdir(old)
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
