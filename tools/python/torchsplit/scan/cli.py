"""``torchsplit scan``: report CUDA couplings inside files (exit 1 when any remain)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import write_output
from torchsplit.scan.allowlist import apply_allowlist, load_allowlist
from torchsplit.scan.scanner import CATEGORIES, DEFAULT_SUFFIXES, Finding, MovedFiles, scan_paths

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


def summary_rows(findings: list[Finding], depth: int) -> list[tuple[str, Counter[str]]]:
    per_dir: dict[str, Counter[str]] = {}
    for f in findings:
        parts = f.path.split("/")[:-1]
        directory = "/".join(parts[:depth]) or "."
        per_dir.setdefault(directory, Counter())[f.category] += 1
    return sorted(per_dir.items())


def render_summary(findings: list[Finding], depth: int) -> str:
    rows = summary_rows(findings, depth)
    used = [c for c in CATEGORIES if any(counter[c] for _, counter in rows)]
    header = ["directory", *used, "total"]
    table = [header]
    for directory, counter in rows:
        table.append([directory, *(str(counter[c]) for c in used), str(sum(counter.values()))])
    totals = Counter(f.category for f in findings)
    table.append(["TOTAL", *(str(totals[c]) for c in used), str(len(findings))])
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


def render_text(findings: list[Finding]) -> str:
    out: list[str] = []
    current = None
    for f in findings:
        if f.path != current:
            if current is not None:
                out.append("")
            current = f.path
        span = f" [span {f.span[0]}-{f.span[1]}]" if f.span else ""
        out.append(f"{f.path}:{f.line}:{f.column}: {f.category}: {f.message}{span}")
        if f.text:
            out.append(f"    {f.text}")
    return "\n".join(out) + ("\n" if out else "")


def cmd_scan(args: argparse.Namespace) -> int:
    for root in args.paths:
        if not os.path.exists(root):
            raise TorchsplitError("no such file or directory (expected a path to scan)", root)
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
    moved = None
    if args.moves:
        moved = moved_from_report(args.moves)
    elif args.build_variables:
        moved = moved_from_build_variables(args.build_variables, args.rules)
    suffixes = DEFAULT_SUFFIXES
    if args.suffixes:
        suffixes = tuple(s if s.startswith(".") else f".{s}" for s in args.suffixes.split(","))
    findings, scanned = scan_paths(
        args.paths, base=args.base, suffixes=suffixes, moved=moved, jobs=args.jobs
    )
    findings = [f for f in findings if f.category in categories or f.category == "unreadable"]
    entries = load_allowlist(args.allowlist) if args.allowlist else []
    kept, allowed, unused = apply_allowlist(findings, entries)

    if args.format == "json":
        data = {
            "files_scanned": scanned,
            "findings": [f.as_dict() for f in kept],
            "allowed": [
                {**f.as_dict(), "allowlist_entry": e.index, "reason": e.reason} for f, e in allowed
            ],
            "unused_allowlist_entries": [
                {"index": e.index, "path": e.path, "category": e.category} for e in unused
            ],
            "summary": {
                d: dict(sorted(c.items())) for d, c in summary_rows(kept, args.summary_depth)
            },
        }
        text = json.dumps(data, indent=2) + "\n"
    elif args.format == "summary":
        text = render_summary(kept, args.summary_depth)
    else:
        text = render_text(kept)
    footer = (
        f"torchsplit scan: {len(kept)} finding(s) in {len({f.path for f in kept})} file(s); "
        f"{len(allowed)} allowlisted; {scanned} file(s) scanned\n"
    )
    if args.output:
        write_output(args.output, text)
    else:
        sys.stdout.write(text)
    sys.stderr.write(footer)
    for entry in unused:
        sys.stderr.write(
            f"torchsplit scan: warning: allowlist entry #{entry.index} ({entry.path}, "
            f"{entry.category}) matched nothing\n"
        )
    return 0 if not kept or args.exit_zero else 1


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "scan",
        help="find CUDA couplings inside C/C++/CUDA/Python files",
        description="Report CUDA couplings with file:line and a category. Exit 1 when any "
        "finding is not allowlisted. Categories: "
        + "; ".join(f"{k} ({v})" for k, v in CATEGORIES.items()),
    )
    p.add_argument("paths", nargs="+", help="files or directories to scan")
    p.add_argument("--format", choices=("text", "json", "summary"), default="text")
    p.add_argument("-o", "--output", help="write the report here (atomically)")
    p.add_argument("--allowlist", help="TOML allowlist of accepted findings")
    p.add_argument("--categories", help="comma-separated categories to report (default: all)")
    p.add_argument("--no-comments", action="store_true", help="do not report comment mentions")
    p.add_argument("--base", default=".", help="paths are reported relative to this directory")
    p.add_argument("--moves", help="reorg report.json: flag includes of files that move")
    p.add_argument("--build-variables", help="or classify this build_variables.bzl to know moves")
    p.add_argument("--rules", help="rules TOML used with --build-variables")
    p.add_argument("--suffixes", help="comma-separated file suffixes to scan")
    p.add_argument("--summary-depth", type=int, default=3, help="directory depth of the summary")
    p.add_argument(
        "-j", "--jobs", type=int, default=2, help="worker processes (default 2; 1 = serial)"
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.set_defaults(func=cmd_scan)
