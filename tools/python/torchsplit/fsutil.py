"""Atomic output: write to a temp file in the same directory, fsync, then os.replace."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def atomic_write(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, LF newlines) to ``path`` atomically: readers see old or new."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_many(files: Mapping[str | os.PathLike[str], str]) -> None:
    """Write several files; every content is computed by the caller before any write starts.

    Each file is replaced atomically. Callers build all texts first, so an error in the
    input leaves every output untouched.
    """
    for path in sorted(files, key=str):
        atomic_write(path, files[path])
