"""What changed between two revisions (or a revision and the working tree), from git."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from torchsplit.errors import TorchsplitError


@dataclass(frozen=True)
class Change:
    """One changed path. A rename is one change with ``old`` set; both paths count."""

    status: str  # A, M, D, R, C, T (git's letters)
    path: str
    old: str | None = None

    @property
    def paths(self) -> list[str]:
        return [self.path] if self.old is None else [self.old, self.path]

    @property
    def deleted(self) -> bool:
        return self.status == "D"


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise TorchsplitError(f"`git {' '.join(args)}` failed: {proc.stderr.strip()}")
    return proc.stdout


def resolve(repo: Path, rev: str) -> str:
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except TorchsplitError:
        raise TorchsplitError(f"no such revision: {rev}") from None


def default_base(repo: Path) -> str:
    """The merge-base of HEAD with main (HEAD itself when main does not exist)."""
    try:
        return git(repo, "merge-base", "main", "HEAD").strip()
    except TorchsplitError:
        return resolve(repo, "HEAD")


def parse_name_status(text: str) -> list[Change]:
    """``git diff --name-status -z`` output: STATUS\\0PATH\\0 or R<score>\\0OLD\\0NEW\\0."""
    fields = text.split("\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][0]
        if status in "RC":
            changes.append(Change(status, fields[i + 2], fields[i + 1]))
            i += 3
        else:
            changes.append(Change(status, fields[i + 1]))
            i += 2
    return changes


def changed_files(repo: Path, base: str, head: str | None) -> list[Change]:
    """Changes from ``base`` to ``head`` (a commit), or to the working tree when ``head`` is
    None: tracked edits, deletions, renames, and untracked files git does not ignore."""
    args = ["diff", "--name-status", "-z", "-M", base]
    if head is not None:
        args.append(head)
    changes = parse_name_status(git(repo, *args))
    if head is None:
        untracked = git(repo, "ls-files", "--others", "--exclude-standard", "-z")
        changes += [Change("A", p) for p in untracked.split("\0") if p]
    return sorted(changes, key=lambda c: c.path)


AUDIT_LINE_PREFIXES = ("#include", "import ", "from ")


def audit_lines_changed(repo: Path, base: str, head: str | None) -> set[str]:
    """Files whose added or removed lines include a header or import a module: the
    layering audit scans those lines, so its pipeline must run."""
    args = ["diff", "-U0", "--no-color", "-M", base]
    if head is not None:
        args.append(head)
    touched: set[str] = set()
    current: str | None = None
    for line in git(repo, *args).splitlines():
        if line.startswith(("+++ ", "--- ")):
            name = line[4:]
            if name != "/dev/null":
                current = name[2:]
                if line.startswith("--- "):
                    continue
            continue
        if line[:1] in "+-" and current and line[1:].lstrip().startswith(AUDIT_LINE_PREFIXES):
            touched.add(current)
    return touched
