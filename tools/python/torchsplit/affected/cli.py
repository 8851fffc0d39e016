"""``torchsplit affected [BASE [HEAD]]``: the CI pipelines a change selects, and why."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from torchsplit.affected.changes import (
    audit_lines_changed,
    changed_files,
    default_base,
    git,
    resolve,
)
from torchsplit.affected.graph import BazelGraph
from torchsplit.affected.pipelines import (
    DEFAULT_PIPELINES,
    PipelinePolicy,
    discover_backends,
    load_pipelines,
)
from torchsplit.affected.select import Selection, Selector
from torchsplit.bazel_run import Bazel, default_bazel
from torchsplit.errors import TorchsplitError


def _repo(arg: str | None) -> Path:
    start = Path(arg or ".").resolve()
    try:
        return Path(git(start, "rev-parse", "--show-toplevel").strip())
    except TorchsplitError as exc:
        raise TorchsplitError("not inside a git checkout", str(start)) from exc


def export_tree(repo: Path, commit: str, dest: Path) -> None:
    """The files of ``commit`` at ``dest`` (git archive; no checkout, no worktree)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=repo, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


class Scratch:
    """Revisions exported under one temporary directory, each with its own Bazel server
    (shut down and removed on exit)."""

    def __init__(self, repo: Path, bazel: list[str]) -> None:
        self.repo = repo
        self.bazel = bazel
        self.root = Path(tempfile.mkdtemp(prefix="torchsplit-affected-"))
        self.trees: list[tuple[Path, list[str]]] = []

    def graph(self, commit: str) -> tuple[Path, BazelGraph]:
        tree = self.root / f"tree-{len(self.trees)}"
        tree.mkdir()
        export_tree(self.repo, commit, tree)
        startup = [f"--output_base={self.root / f'output-{len(self.trees)}'}"]
        self.trees.append((tree, startup))
        return tree, BazelGraph(Bazel(tree, self.bazel, startup=startup))

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        for tree, startup in self.trees:
            subprocess.run(
                [*self.bazel, *startup, "shutdown"], cwd=tree, capture_output=True, check=False
            )
        shutil.rmtree(self.root, ignore_errors=True)


def load_policy_for(repo: Path, tree: Path) -> PipelinePolicy:
    """HEAD's own policy; a revision older than the policy is judged by the checkout's."""
    policy_file = tree / DEFAULT_PIPELINES
    if not policy_file.exists():
        policy_file = repo / DEFAULT_PIPELINES
    return load_pipelines(policy_file, discover_backends(tree))


def affected(repo: Path, base: str, head: str | None, bazel: list[str]) -> Selection:
    """Select pipelines for base..head (head None: the working tree)."""
    with Scratch(repo, bazel) as scratch:
        if head is None:
            tree, graph = repo, BazelGraph(Bazel(repo, bazel))
        else:
            tree, graph = scratch.graph(head)
        policy = load_policy_for(repo, tree)
        selector = Selector(policy, graph, tree, lambda: scratch.graph(base)[1].rules())
        changes = changed_files(repo, base, head)
        return selector.select(
            base, head or "working tree", changes, audit_lines_changed(repo, base, head)
        )


def render(sel: Selection) -> str:
    lines = [
        f"torchsplit affected {sel.base[:12]}..{sel.head[:12]}: {len(sel.changes)} changed file(s)"
    ]
    for change in sel.changes:
        lines.append(f"  {change.status} {change.old + ' -> ' if change.old else ''}{change.path}")
    if sel.everything:
        lines.append("everything selected:")
        lines += [f"  {why}" for why in sel.everything]
    lines.append(f"pipelines: {', '.join(sel.names) or '(none)'}")
    for p in sel.pipelines:
        lines.append(f"  {p.name}")
        lines.append(f"    why: {p.why}")
        lines.append(f"    tests: {' '.join(p.tests) or '-'}")
        lines.append(f"    pytest: {' '.join(p.pytest) or '-'}")
    lines.append(f"skipped: {', '.join(sel.skipped) or '(none)'}")
    return "\n".join(lines)


def cmd_affected(args: argparse.Namespace) -> int:
    repo = _repo(args.repo)
    base = resolve(repo, args.base) if args.base else default_base(repo)
    head = resolve(repo, args.head) if args.head else None
    sel = affected(repo, base, head, [args.bazel or default_bazel(repo)])
    print(json.dumps(sel.as_dict(), indent=2) if args.json else render(sel))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "affected",
        help="the CI pipelines a change selects (core, one per backend, tools, docs-only), and why",
        description="Map the files changed between BASE (default: merge-base with main) and HEAD "
        "(default: the working tree) onto Bazel targets (reverse dependencies over every select() "
        f"branch) and onto the pipelines of {DEFAULT_PIPELINES}. Prints each pipeline's test "
        "targets, pytest paths and one line of why. When it cannot tell, it selects everything "
        "and says why. Exit 0.",
    )
    p.add_argument("base", nargs="?", help="base revision (default: merge-base of HEAD and main)")
    p.add_argument("head", nargs="?", help="head revision (default: the working tree)")
    p.add_argument("--json", action="store_true", help="machine-readable output (for CI)")
    p.add_argument("--repo", help="the git checkout (default: the one around .)")
    p.add_argument("--bazel", help="Bazel launcher (default: the checkout's tools/bazel)")
    p.set_defaults(func=cmd_affected)
