"""Draw the hand-check sample from a ``torchsplit scan --plan --format json`` work list.

Usage: python3 bench/scan_hand_sample.py PLAN.json [--seed N] [--edits 25]
[--mentions 15] [--moves 15] [--generated 15]

Prints, per bucket, the files to judge by hand with the plan's claim for each: an edit's
categories and seams, a mention-only file's categories, a move's criterion and backend,
a torchgen or generated template's files. A file is drawn when its ``sha256(seed:path)``
is among the bucket's smallest, so the sample is repeatable and stays the same for the
files a change to the scanner does not move between buckets (a random draw by index
would reshuffle after any insertion). Asserts nothing: the verdicts are a person's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

Entry = dict[str, Any]


def draw(entries: list[Entry], count: int, seed: int) -> list[Entry]:
    """The ``count`` entries whose ``sha256(seed:path)`` is smallest, in that order."""

    def rank(entry: Entry) -> str:
        return hashlib.sha256(f"{seed}:{entry['path']}".encode()).hexdigest()

    return sorted(entries, key=rank)[:count]


def _short_seam(seam: str) -> str:
    return seam.split(":")[0]


def claims(plan: dict[str, Any], counts: dict[str, int], seed: int) -> list[tuple[str, str, str]]:
    """(bucket, path, the plan's claim) for every drawn file."""
    rows: list[tuple[str, str, str]] = []
    edits = [f for group in plan["edits"] for f in group["files"]]
    for f in draw(edits, counts["edits"], seed):
        cats = ", ".join(f"{c} {n}" for c, n in sorted(f["categories"].items()))
        seams = "; ".join(_short_seam(s["seam"]) for s in f["seams"])
        rows.append(("edit", f["path"], f"{cats} -> {seams}"))
    for f in draw(plan["mentions_only"], counts["mentions"], seed):
        cats = sorted({x["category"] for x in f["findings"]})
        rows.append(("mentions only", f["path"], f"{f['count']} ({', '.join(cats)})"))
    for f in draw(plan["moves"], counts["moves"], seed):
        rows.append(("move", f["path"], f"{f['criterion']} -> {f['family']}"))
    templates = [
        {"path": t["template"], "files": t["files"], "kind": "torchgen"} for t in plan["torchgen"]
    ] + [
        {"path": t["template"], "files": [x["path"] for x in t["files"]], "kind": "generated"}
        for t in plan["generated"]
    ]
    for t in draw(templates, counts["generated"], seed):
        rows.append((t["kind"], t["path"], f"{len(t['files'])} file(s)"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", type=Path, help="scan --plan --format json output")
    parser.add_argument("--seed", type=int, default=25)
    for bucket, default in (("edits", 25), ("mentions", 15), ("moves", 15), ("generated", 15)):
        parser.add_argument(f"--{bucket}", type=int, default=default)
    args = parser.parse_args(argv)
    try:
        plan = json.loads(args.plan.read_text())
    except (OSError, ValueError) as exc:
        print(f"torchsplit: error: {args.plan}: {exc}", file=sys.stderr)
        return 2
    counts = {b: getattr(args, b) for b in ("edits", "mentions", "moves", "generated")}
    for bucket, path, claim in claims(plan, counts, args.seed):
        print(f"{bucket}\t{path}\t{claim}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
