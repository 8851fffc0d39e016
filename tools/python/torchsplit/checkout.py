"""Copies of the checkout for tests and harnesses that must edit the tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

GIT_IDENTITY = ["-c", "user.name=torchsplit", "-c", "user.email=torchsplit@localhost"]


def copy_checkout(source: Path, dest: Path) -> None:
    """Copy the files git knows of (tracked, and untracked but not ignored) to ``dest``."""
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=source,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = source / name.decode()
        if src.is_file():
            (dest / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name.decode())


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def snapshot(root: Path) -> None:
    """Make ``root`` a git repository with one commit, so edits can be reverted."""
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "baseline")


def revert(root: Path) -> None:
    """Back to the snapshot: tracked edits undone, new files removed (ignored ones kept)."""
    git(root, "checkout", "-q", "--", ".")
    git(root, "clean", "-fdq")
