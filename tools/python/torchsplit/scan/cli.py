"""``torchsplit scan``: report GPU-vendor couplings inside files.

Exit 0 when nothing remains, 1 when findings (or, with ``--plan``, edits) remain, 2
when a path could not be scanned (missing, unreadable): the rest is still scanned and
reported, and each such path is named on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import write_output
from torchsplit.scan.allowlist import AllowEntry, load_allowlist
from torchsplit.scan.plan import (
    build_plan,
    load_moves_tsv,
    not_listed_line,
    plan_json,
    render_plan,
)
from torchsplit.scan.scanner import (
    CATEGORIES,
    DEFAULT_MAX_PER_FILE,
    DEFAULT_SUFFIXES,
    FileResult,
    MovedFiles,
    ScanResult,
    Selection,
    WalkIssue,
    scan_tree,
)
from torchsplit.vendors import FAMILIES

MOVED_PREFIX = "//third_device/"


def moved_from_report(path: str) -> MovedFiles:
    """Moving files from a ``reorg`` report.json (decisions whose target is under third_device)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TorchsplitError("reorg report not found", path) from exc
    except json.JSONDecodeError as exc:
        raise TorchsplitError(f"invalid JSON: {exc.msg}", path, exc.lineno) from exc
    decisions = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(decisions, list):
        raise TorchsplitError("expected a reorg report.json with a 'decisions' list", path)
    return MovedFiles.from_sources(
        d["source"] for d in decisions if str(d.get("target", "")).startswith(MOVED_PREFIX)
    )


def moved_from_build_variables(bzl: str, rules: str | None) -> MovedFiles:
    from torchsplit.reorg.classify import classify
    from torchsplit.reorg.rules import load_rules
    from torchsplit.reorg.starlark_eval import evaluate

    result = classify(evaluate(bzl), load_rules(rules))
    return MovedFiles.from_sources(
        d.source for d in result.decisions.values() if d.target.startswith(MOVED_PREFIX)
    )


def summary_rows(files: list[FileResult], depth: int) -> list[tuple[str, Counter[str]]]:
    """Category counts per directory, unlisted findings included."""
    per_dir: dict[str, Counter[str]] = {}
    for r in files:
        if not r.total:
            continue
        parts = r.path.split("/")[:-1]
        directory = "/".join(parts[:depth]) or "."
        per_dir.setdefault(directory, Counter()).update(r.category_counts())
    return sorted(per_dir.items())


def render_summary(files: list[FileResult], depth: int) -> str:
    rows = summary_rows(files, depth)
    used = [c for c in CATEGORIES if any(counter[c] for _, counter in rows)]
    header = ["directory", *used, "total"]
    table = [header]
    for directory, counter in rows:
        table.append([directory, *(str(counter[c]) for c in used), str(sum(counter.values()))])
    totals: Counter[str] = Counter()
    for _, counter in rows:
        totals.update(counter)
    table.append(["TOTAL", *(str(totals[c]) for c in used), str(sum(r.total for r in files))])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    out = []
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out) + "\n"


def render_text(files: list[FileResult], limit: int) -> str:
    out: list[str] = []
    for r in files:
        if not r.total:
            continue
        if out:
            out.append("")
        for f in r.findings:
            cats = "+".join(f.categories)
            fams = ",".join(f.families)
            out.append(f"{f.path}:{f.line}:{f.column}: {cats} [{fams}]: {f.message}")
            if f.text:
                out.append(f"    {f.text}")
        if r.unlisted.count:
            out.append(not_listed_line(r.path, r.unlisted.count, limit))
    return "\n".join(out) + ("\n" if out else "")


def _categories(args: argparse.Namespace) -> frozenset[str]:
    categories = set(CATEGORIES)
    if args.categories:
        categories = {c.strip() for c in args.categories.split(",") if c.strip()}
        bad = categories - set(CATEGORIES)
        if bad:
            raise TorchsplitError(
                f"unknown categories {sorted(bad)}; expected some of {', '.join(CATEGORIES)}"
            )
    if args.no_comments:
        categories.discard("comment-mention")
    return frozenset(categories)


def _moves(args: argparse.Namespace) -> tuple[MovedFiles | None, set[str] | None]:
    if args.moves and not args.moves.endswith(".json"):
        moves_tsv = load_moves_tsv(args.moves)
        return MovedFiles.from_sources(moves_tsv), moves_tsv
    if args.moves:
        return moved_from_report(args.moves), None
    if args.build_variables:
        return moved_from_build_variables(args.build_variables, args.rules), None
    return None, None


def _issues_json(issues: list[WalkIssue]) -> list[dict[str, object]]:
    return [{"path": i.path, "message": i.message, "error": i.error} for i in issues]


def _plan_report(
    args: argparse.Namespace, result: ScanResult, moves_tsv: set[str] | None
) -> tuple[str, str, bool]:
    plan = build_plan(
        result.files, args.family, moves_tsv, result.paths, args.max_per_file, args.base
    )
    if args.format == "json":
        data = {"files_scanned": result.scanned, **plan_json(plan, args.family)}
        data["skipped"] = _issues_json(result.all_issues())
        text = json.dumps(data, indent=2) + "\n"
    else:
        text = render_plan(
            plan, args.family, show_mentions=args.mentions, show_moves=args.show_moves
        )
    footer = (
        f"torchsplit scan: {len(plan.edits)} file(s) to edit, {len(plan.moves)} to move, "
        f"{sum(len(p) for p in plan.torchgen.values())} generated to emit elsewhere "
        f"({len(plan.torchgen)} template(s)), {len(plan.generated)} template(s) with "
        f"couplings, {len(plan.other_backend)} of another backend, "
        f"{len(plan.third_party)} third party, {len(plan.mentions)} with mentions only; "
        f"{result.scanned} file(s) scanned\n"
    )
    return text, footer, bool(plan.edits)


def _not_listed_json(files: list[FileResult]) -> dict[str, dict[str, object]]:
    """Per file whose findings were cut by --max-per-file: what was left unlisted."""
    return {
        r.path: {
            "findings": r.unlisted.count,
            "categories": dict(sorted(r.unlisted.categories.items())),
            "allowed": r.allowed_unlisted,
        }
        for r in files
        if r.unlisted.count or r.allowed_unlisted
    }


def _findings_report(
    args: argparse.Namespace, result: ScanResult, entries: dict[int, AllowEntry]
) -> tuple[str, str, bool]:
    total = result.total
    if args.format == "json":
        data = {
            "files_scanned": result.scanned,
            "max_per_file": args.max_per_file,
            "findings": [f.as_dict() for f in result.findings],
            "allowed": [
                {**f.as_dict(), "allowlist_entry": i, "reason": entries[i].reason}
                for f, i in result.allowed
            ],
            "not_listed": _not_listed_json(result.files),
            "unused_allowlist_entries": [
                {"index": e.index, "path": e.path, "category": e.category}
                for e in _unused(entries, result)
            ],
            "summary": {
                d: dict(sorted(c.items()))
                for d, c in summary_rows(result.files, args.summary_depth)
            },
            "skipped": _issues_json(result.all_issues()),
        }
        text = json.dumps(data, indent=2) + "\n"
    elif args.format == "summary":
        text = render_summary(result.files, args.summary_depth)
    else:
        text = render_text(result.files, args.max_per_file)
    unlisted = result.unlisted
    footer = (
        f"torchsplit scan: {total} finding(s) in {sum(1 for r in result.files if r.total)} "
        f"file(s); {result.allowed_total} allowlisted; {result.scanned} file(s) scanned"
        + (f" ({unlisted} not listed: --max-per-file {args.max_per_file})" if unlisted else "")
        + "\n"
    )
    return text, footer, bool(total)


def _unused(entries: dict[int, AllowEntry], result: ScanResult) -> list[AllowEntry]:
    used = result.used_entries()
    return [e for i, e in entries.items() if i not in used]


def cmd_scan(args: argparse.Namespace) -> int:
    if args.max_per_file < 0:
        raise TorchsplitError(
            f"--max-per-file must be 0 (unlimited) or more, not {args.max_per_file}"
        )
    moved, moves_tsv = _moves(args)
    suffixes = DEFAULT_SUFFIXES
    if args.suffixes:
        suffixes = tuple(s if s.startswith(".") else f".{s}" for s in args.suffixes.split(","))
    entries = {e.index: e for e in (load_allowlist(args.allowlist) if args.allowlist else [])}
    # Filters and allowlist run inside the scan, before the per-file limit: what they
    # drop neither counts against the limit nor shows in the totals.
    selection = Selection(
        categories=_categories(args),
        family=args.family,
        allow=tuple(entries.values()),
        max_per_file=args.max_per_file,
        # the source lines: for every report but the text work list (allowlist lines need
        # them too)
        texts=not (args.plan and args.format == "text") or bool(entries),
    )
    result = scan_tree(
        args.paths,
        base=args.base,
        suffixes=suffixes,
        moved=moved,
        jobs=args.jobs,
        selection=selection,
    )
    if args.plan:
        text, footer, remaining = _plan_report(args, result, moves_tsv)
    else:
        text, footer, remaining = _findings_report(args, result, entries)
    if args.output:
        write_output(args.output, text)
    else:
        sys.stdout.write(text)
    issues = result.all_issues()
    for issue in issues:
        kind = "error" if issue.error else "note"
        sys.stderr.write(f"torchsplit scan: {kind}: {issue.path}: {issue.message}\n")
    sys.stderr.write(footer)
    for entry in _unused(entries, result):
        sys.stderr.write(
            f"torchsplit scan: warning: allowlist entry #{entry.index} ({entry.path}, "
            f"{entry.category}) matched nothing\n"
        )
    if any(i.error for i in issues):
        return 2
    return 0 if not remaining or args.exit_zero else 1


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "scan",
        help="find CUDA/ROCm couplings inside C/C++/CUDA/Python files",
        description="Report GPU-vendor couplings with file:line, categories and family. Exit "
        "1 when any finding is not allowlisted, 2 when a path could not be scanned. "
        "Categories: " + "; ".join(f"{k} ({v})" for k, v in CATEGORIES.items()),
    )
    p.add_argument("paths", nargs="+", help="files or directories to scan")
    p.add_argument("--format", choices=("text", "json", "summary"), default="text")
    p.add_argument("-o", "--output", help="write the report here (atomically)")
    p.add_argument("--allowlist", help="TOML allowlist of accepted findings")
    p.add_argument("--categories", help="comma-separated categories to report (default: all)")
    p.add_argument("--no-comments", action="store_true", help="do not report comment mentions")
    p.add_argument("--base", default=".", help="paths are reported relative to this directory")
    p.add_argument(
        "--moves",
        help="files that move: reorg emit's moves.tsv (the --plan move set; includes of them "
        "are flagged) or a reorg report.json",
    )
    p.add_argument(
        "--plan",
        action="store_true",
        help="the work list: edits (files that stay with code couplings, ranked, each with "
        "its seam), moves, torchgen (generated files to emit under third_device), generated "
        "(templates whose output carries couplings), other backend, third party, mentions only",
    )
    p.add_argument(
        "--family",
        choices=("all", *FAMILIES),
        default="all",
        help="vendor family: cuda (the RFC's CUDA-only view), rocm, or all (whole GPU)",
    )
    p.add_argument("--mentions", action="store_true", help="--plan: list mention-only files")
    p.add_argument("--show-moves", action="store_true", help="--plan: list the moving files")
    p.add_argument("--build-variables", help="or classify this build_variables.bzl to know moves")
    p.add_argument("--rules", help="rules TOML used with --build-variables")
    p.add_argument("--suffixes", help="comma-separated file suffixes to scan")
    p.add_argument("--summary-depth", type=int, default=3, help="directory depth of the summary")
    p.add_argument(
        "-j", "--jobs", type=int, default=2, help="worker processes (default 2; 1 = serial)"
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument(
        "--max-per-file",
        type=int,
        default=DEFAULT_MAX_PER_FILE,
        metavar="N",
        help=f"list at most N findings per file (default {DEFAULT_MAX_PER_FILE}; 0 = all): "
        "the first N by line and column; the rest are counted (totals, summary and --plan "
        "counts stay exact) and a line says how many were not listed. Keeps memory bounded "
        "on files dense with findings. Filters and the allowlist apply first",
    )
    p.set_defaults(func=cmd_scan)
