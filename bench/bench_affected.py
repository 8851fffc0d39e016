"""Replay main's history through `torchsplit affected`; check soundness by mutation.

    python3 bench/bench_affected.py [--mutations 12] [--branch main] [--no-write]

1. History: every first-parent commit of BRANCH against its parent. Each commit's
   files go into one scratch tree (git archive), queried by one Bazel server; the
   policy is today's tools/layering/pipelines.bzl. Per commit: the pipelines
   selected, and the fraction of test targets and of pytest files skipped.
   Selections are cached per (commit, policy) under ~/.cache/torchsplit/.
2. Soundness: for a sample of commits (those not selecting everything, the
   narrowest selections first, at most 3 files each), break one line in each
   changed C++/CUDA/Python source the build graph knows, in a copy of today's
   tree (building old revisions would take hours), and run the Bazel tests of
   the pipelines that commit selected, after a baseline run of every test,
   unmutated, has passed. A mutation is caught when they fail. Zero misses
   allowed: exit 1 on a miss.

Prints both tables and writes them as the "torchsplit affected" section of
docs/benchmarks.md (between markers; the rest of the file is left alone).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bazel_bench import REPO, machine

from torchsplit.affected.changes import audit_lines_changed, changed_files, git
from torchsplit.affected.cli import export_tree
from torchsplit.affected.graph import BazelGraph
from torchsplit.affected.pipelines import DEFAULT_PIPELINES, discover_backends, load_pipelines
from torchsplit.affected.select import Selector
from torchsplit.bazel_run import Bazel, BazelFailed
from torchsplit.checkout import copy_checkout
from torchsplit.fsutil import write_output

CACHE = Path.home() / ".cache" / "torchsplit" / "bench-affected"
BEGIN = "<!-- bench_affected:begin -->"
END = "<!-- bench_affected:end -->"
MUTABLE = (".cpp", ".cc", ".h", ".cu", ".cuh", ".py")
PER_COMMIT = 3
LAUNCHER = [str(REPO / "tools" / "bazel")]


def pytest_files(tree: Path) -> list[str]:
    return sorted(str(p.relative_to(tree)) for p in (tree / "tests").rglob("test_*.py"))


def under(path: str, dirs: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def replay(branch: str, limit: int | None) -> list[dict[str, object]]:
    commits = git(REPO, "rev-list", "--first-parent", "--reverse", branch).split()
    if limit:
        commits = commits[-limit - 1 :]
    policy_text = (REPO / DEFAULT_PIPELINES).read_bytes()
    tool = b"".join(
        p.read_bytes() for p in sorted((REPO / "tools/python/torchsplit/affected").glob("*.py"))
    )
    policy_key = hashlib.sha256(policy_text + tool).hexdigest()[:12]
    CACHE.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-affected-"))
    tree = scratch / "tree"
    startup = [f"--output_base={scratch / 'output'}"]
    rules: dict[str, dict[str, str]] = {}
    rows: list[dict[str, object]] = []
    try:
        for parent, commit in itertools.pairwise(commits):
            cached = CACHE / f"{commit}-{policy_key}.json"
            if cached.exists():
                rows.append(json.loads(cached.read_text()))
                print(f"  {commit[:8]} (cached)", file=sys.stderr)
                continue
            shutil.rmtree(tree, ignore_errors=True)
            tree.mkdir()
            export_tree(REPO, commit, tree)
            graph = BazelGraph(Bazel(tree, LAUNCHER, startup=startup))
            policy = load_pipelines(REPO / DEFAULT_PIPELINES, discover_backends(tree))

            def base_rules(parent: str = parent) -> dict[str, str]:
                if parent not in rules:
                    raise BazelFailed(f"no graph kept for {parent[:8]}")
                return rules[parent]

            sel = Selector(policy, graph, tree, base_rules).select(
                parent,
                commit,
                changed_files(REPO, parent, commit),
                audit_lines_changed(REPO, parent, commit),
            )
            try:
                rules[commit] = graph.rules()
                existing = graph.tests()
            except BazelFailed:
                existing = set(policy.all_tests)
            all_tests = sorted(set(policy.all_tests) & existing) or policy.all_tests
            files = pytest_files(tree)
            chosen_tests = {t for p in sel.pipelines for t in p.tests} & set(all_tests)
            chosen_dirs = [d for p in sel.pipelines for d in p.pytest]
            row: dict[str, object] = {
                "commit": commit,
                "subject": git(REPO, "log", "-1", "--format=%s", commit).strip(),
                "changed": len(sel.changes),
                "changes": [c.path for c in sel.changes],
                "pipelines": sel.names,
                "everything": sel.everything[:1],
                "tests": [len(chosen_tests), len(all_tests)],
                "pytest": [sum(under(f, chosen_dirs) for f in files), len(files)],
                "selection": sel.as_dict(),
            }
            cached.write_text(json.dumps(row))
            rows.append(row)
            print(f"  {commit[:8]} {','.join(sel.names)}", file=sys.stderr)
    finally:
        subprocess.run(
            [*LAUNCHER, *startup, "shutdown"], cwd=REPO, capture_output=True, check=False
        )
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def skipped(pair: object) -> float:
    chosen, total = pair  # type: ignore[misc]
    return 1 - chosen / total if total else 0.0


def history_table(rows: list[dict[str, object]]) -> str:
    out = [
        "| commit | changed files | pipelines selected | test targets | pytest files "
        "| why everything |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        tests, files = row["tests"], row["pytest"]
        out.append(
            f"| {str(row['commit'])[:8]} | {row['changed']} | {', '.join(row['pipelines'])} "  # type: ignore[arg-type]
            f"| {tests[0]}/{tests[1]} run, {skipped(tests):.0%} skipped "  # type: ignore[index]
            f"| {files[0]}/{files[1]} run, {skipped(files):.0%} skipped "  # type: ignore[index]
            f"| {' '.join(row['everything']).replace('|', '/')[:70]} |"  # type: ignore[arg-type]
        )
    n = len(rows) or 1
    mean_t = sum(skipped(r["tests"]) for r in rows) / n
    mean_f = sum(skipped(r["pytest"]) for r in rows) / n
    every = sum(1 for r in rows if r["everything"])
    out.append("")
    out.append(
        f"{len(rows)} commits: mean {mean_t:.0%} of test targets and {mean_f:.0%} of pytest "
        f"files skipped; {every} selected everything."
    )
    return "\n".join(out)


def mutate(path: Path) -> bool:
    """Break one line: an #error in C++/CUDA, a raise at import time in Python."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if path.suffix == ".py":
        # After the module docstring and the __future__ import, at top level.
        at = 0
        for i, line in enumerate(lines):
            if line.startswith(("import ", "from ")):
                at = i + 1
                break
        lines.insert(at, 'raise RuntimeError("torchsplit mutation")')
    else:
        at = next((i for i, line in enumerate(lines) if line.startswith("#include")), 0)
        lines.insert(at, "#error torchsplit mutation")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return True


def soundness(rows: list[dict[str, object]], budget: int) -> tuple[list[list[str]], int, int]:
    """Mutations in a copy of today's tree; (table rows, caught, missed)."""
    work = Path(tempfile.mkdtemp(prefix="bench-affected-mut-"))
    tree = work / "tree"
    tree.mkdir()
    copy_checkout(REPO, tree)
    if (REPO / "user.bazelrc").exists():
        shutil.copy2(REPO / "user.bazelrc", tree / "user.bazelrc")
    startup = [f"--output_base={work / 'output'}"]
    bazel = Bazel(tree, LAUNCHER, startup=startup, timeout=3600)
    known = BazelGraph(bazel).known_files()
    table: list[list[str]] = []
    caught = missed = 0
    try:
        # Unmutated, every test must pass, or a failure would prove nothing.
        all_tests = sorted({t for r in rows for t in r["selection"]["tests"]})  # type: ignore[index]
        baseline = bazel.run("test", "--config=ci", "--test_output=errors", *all_tests, check=False)
        if baseline.returncode != 0:
            raise SystemExit(f"baseline bazel test fails:\n{baseline.stderr[-3000:]}")
        print(f"  baseline: {' '.join(all_tests)} pass", file=sys.stderr)
        # Narrowest selections first (they are the ones that can miss), a few files each.
        candidates = [r for r in rows if not r["everything"]]
        candidates.sort(key=lambda r: (len(r["selection"]["tests"]), -rows.index(r)))  # type: ignore[index]
        for row in candidates:
            tests = sorted(set(row["selection"]["tests"]))  # type: ignore[index]
            per_commit = 0
            for rel in row["changes"]:  # type: ignore[union-attr]
                if len(table) >= budget or per_commit >= PER_COMMIT:
                    break
                if not rel.endswith(MUTABLE) or rel not in known or not (tree / rel).exists():
                    continue
                if any(cells[1] == rel for cells in table):
                    continue
                per_commit += 1
                original = (tree / rel).read_bytes()
                mutate(tree / rel)
                try:
                    code = 0
                    if tests:
                        proc = bazel.run(
                            "test", "--config=ci", "--test_output=summary", *tests, check=False
                        )
                        code = proc.returncode
                finally:
                    (tree / rel).write_bytes(original)
                if code not in (0, 1, 3):  # 2: bad flags, 8: interrupted... not a verdict
                    raise SystemExit(f"bazel test exited {code} for {rel}:\n{proc.stderr[-2000:]}")
                caught += code != 0
                missed += code == 0
                verdict = {0: "**missed**", 1: "caught (build fails)", 3: "caught (test fails)"}
                result = verdict[code]
                pipelines = ", ".join(row["pipelines"])  # type: ignore[arg-type]
                table.append([str(row["commit"])[:8], rel, pipelines, " ".join(tests), result])
                print(f"  mutation {rel}: {result}", file=sys.stderr)
    finally:
        subprocess.run(
            [*LAUNCHER, *startup, "shutdown"], cwd=tree, capture_output=True, check=False
        )
        shutil.rmtree(work, ignore_errors=True)
    return table, caught, missed


def mutation_table(table: list[list[str]], caught: int, missed: int) -> str:
    out = [
        "| commit | mutated file | pipelines selected | Bazel tests run | result |",
        "|---|---|---|---|---|",
    ]
    out += ["| " + " | ".join(cells) + " |" for cells in table]
    out.append("")
    out.append(f"Mutations tried: {len(table)}, caught: {caught}, missed: {missed}.")
    return "\n".join(out)


def write_section(text: str) -> None:
    doc = REPO / "docs" / "benchmarks.md"
    current = doc.read_text(encoding="utf-8")
    block = f"{BEGIN}\n{text.rstrip()}\n{END}"
    if BEGIN in current and END in current:
        head, _, rest = current.partition(BEGIN)
        _, _, tail = rest.partition(END)
        new = head + block + tail
    else:
        new = current.rstrip("\n") + "\n\n" + block + "\n"
    write_output(doc, new)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branch", default="main")
    parser.add_argument("--limit", type=int, help="only the newest N commits")
    parser.add_argument("--mutations", type=int, default=12, help="mutation budget (0: none)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    print(f"replaying {args.branch}", file=sys.stderr)
    rows = replay(args.branch, args.limit)
    history = history_table(rows)
    print(history)
    sections = [history]
    missed = 0
    if args.mutations:
        table, caught, missed = soundness(rows, args.mutations)
        text = mutation_table(table, caught, missed)
        print(text)
        sections.append(text)
    head = git(REPO, "rev-parse", "--short", "HEAD").strip()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc = (
        "## torchsplit affected: pipelines selected over main's history\n\n"
        f"Generated by `python3 bench/bench_affected.py` (commit {head}, {machine()}, {date}). "
        "Each first-parent commit of main against its parent, judged by today's "
        "tools/layering/pipelines.bzl; 'run' counts the test targets and pytest files of the "
        "selected pipelines (docs/affected.md).\n\n" + history + "\n\n### Soundness by mutation\n\n"
        "One line broken (`#error` in C++/CUDA, a `raise` at import in Python) per changed "
        "source the build graph knows, in a copy of today's tree; the Bazel tests of the "
        "pipelines that commit selected must fail.\n\n"
        + (sections[1] if len(sections) > 1 else "(not run)")
    )
    if not args.no_write:
        write_section(doc)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
