"""``torchsplit scan --plan``: the maintainer's work list.

Every scanned file with something to say falls in exactly one bucket:

* **moves** -- the file leaves core: the RFC's inter-file criteria (a directory
  ``cuda/``, ``cudnn/``, ``THC/`` -- plus ``hip/``, ``miopen/`` for ROCm --, a name
  containing "cuda", a ``.cu``/``.cuh`` file), or the move set of ``reorg emit``'s
  ``moves.tsv`` when one is given;
* **generated** -- a ``@generated`` file: fixed in its generator, listed once per
  template;
* **edits** -- the file stays and carries code couplings: the list to work through;
* **mentions only** -- the file stays and only names a vendor in prose, strings or
  identifiers.

Counts include the findings a per-file limit (``--max-per-file``) left unlisted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit import vendors
from torchsplit.errors import TorchsplitError
from torchsplit.scan.scanner import CATEGORIES, MENTION_CATEGORIES, FileResult, Finding


@dataclass
class PlanFile:
    """One file's findings in a bucket: those listed, and exact counts of all of them."""

    findings: list[Finding]  # listed (for edits: the code couplings only)
    count: int  # listed or not
    categories: Counter[str]  # listed or not (for edits: the code categories only)

    @property
    def not_listed(self) -> int:
        return self.count - len(self.findings)


@dataclass
class Plan:
    moves: dict[str, str] = field(default_factory=dict)  # path -> criterion
    edits: dict[str, PlanFile] = field(default_factory=dict)
    generated: dict[str, list[str]] = field(default_factory=dict)  # template -> paths
    mentions: dict[str, PlanFile] = field(default_factory=dict)
    max_per_file: int = 0  # the limit that left findings unlisted (0: none)


def load_moves_tsv(path: str) -> set[str]:
    """Source paths of a ``moves.tsv`` (first column; ``#`` comments, a header row)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TorchsplitError(f"cannot read moves file: {exc.strerror or exc}", path) from exc
    out: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        first = line.split("\t", 1)[0].strip()
        if number == 1 and first.lower() in ("source", "from", "path"):
            continue
        if not first:
            raise TorchsplitError("empty source column", path, number)
        out.add(first)
    return out


def move_reason(path: str, family: str, moves_tsv: set[str] | None) -> str | None:
    if moves_tsv is not None:
        if path in moves_tsv or any(path.endswith("/" + m) for m in moves_tsv if "/" in m):
            return "moves.tsv"
        return None
    hit = vendors.move_family(path, None if family == "all" else family)
    return None if hit is None else hit[1]


def _code(finding: Finding) -> bool:
    return not MENTION_CATEGORIES.issuperset(finding.categories)


def _edit(result: FileResult) -> PlanFile:
    listed = [f for f in result.findings if _code(f)]
    counts = Counter(c for f in listed for c in f.categories if c not in MENTION_CATEGORIES)
    for category, n in result.unlisted.categories.items():
        if category not in MENTION_CATEGORIES:
            counts[category] += n
    return PlanFile(listed, len(listed) + result.unlisted.code, counts)


def build_plan(
    files: list[FileResult],
    family: str,
    moves_tsv: set[str] | None,
    paths: Iterable[str] = (),
    max_per_file: int = 0,
) -> Plan:
    """Bucket ``files``; ``paths`` (every scanned file) adds the moves without findings."""
    plan = Plan(max_per_file=max_per_file)
    skipped = {r.path for r in files if r.error or r.note}
    for path in paths:
        reason = move_reason(path, family, moves_tsv)
        if reason is not None and path not in skipped:
            plan.moves[path] = reason
    for result in files:
        if result.error or result.note:
            continue
        reason = move_reason(result.path, family, moves_tsv)
        if reason is not None:
            plan.moves[result.path] = reason
            continue
        if result.generated is not None:
            plan.generated.setdefault(result.generated, []).append(result.path)
            continue
        edit = _edit(result)
        if edit.count:
            plan.edits[result.path] = edit
        elif result.total:
            plan.mentions[result.path] = PlanFile(
                result.findings, result.total, result.category_counts()
            )
    return plan


def _dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def ranked_edits(plan: Plan) -> list[tuple[str, list[tuple[str, PlanFile]]]]:
    """Directories by coupling count, each with its files by coupling count."""
    groups: dict[str, list[tuple[str, PlanFile]]] = {}
    for path, edit in plan.edits.items():
        groups.setdefault(_dir(path), []).append((path, edit))
    for files in groups.values():
        files.sort(key=lambda item: (-item[1].count, item[0]))
    return sorted(groups.items(), key=lambda kv: (-sum(e.count for _, e in kv[1]), kv[0]))


def edit_counts(plan: Plan) -> Counter[str]:
    counts: Counter[str] = Counter()
    for edit in plan.edits.values():
        counts.update(edit.categories)
    return counts


def not_listed_line(path: str, count: int, limit: int) -> str:
    return f"{path}: {count} more finding(s) not listed (--max-per-file {limit})"


def render_plan(plan: Plan, family: str, *, show_mentions: bool, show_moves: bool) -> str:
    out: list[str] = []
    couplings = sum(e.count for e in plan.edits.values())
    counts = edit_counts(plan)
    out.append(
        f"EDITS ({family}): {len(plan.edits)} file(s) stay in core with {couplings} code "
        "coupling(s)"
    )
    out.append("  by category: " + ", ".join(f"{c} {counts[c]}" for c in CATEGORIES if counts[c]))
    for directory, files in ranked_edits(plan):
        total = sum(e.count for _, e in files)
        out.append("")
        out.append(f"== {directory}/  ({len(files)} file(s), {total} coupling(s))")
        for path, edit in files:
            ranked = sorted(edit.categories.items(), key=lambda x: -x[1])
            summary = ", ".join(f"{c} {n}" for c, n in ranked)
            out.append(f"  {path}  [{edit.count}: {summary}]")
            for f in edit.findings:
                out.append(f"    {f.line}:{f.column} {'+'.join(f.categories)}: {f.message}")
            if edit.not_listed:
                out.append("    " + not_listed_line(path, edit.not_listed, plan.max_per_file))
    out.append("")
    by_reason = Counter(plan.moves.values())
    out.append(
        f"MOVES: {len(plan.moves)} file(s) leave core ("
        + ", ".join(f"{r} {n}" for r, n in by_reason.most_common())
        + ")"
    )
    if show_moves:
        out.extend(f"  {p}  ({r})" for p, r in sorted(plan.moves.items()))
    n_gen = sum(len(p) for p in plan.generated.values())
    out.append(
        f"GENERATED: {n_gen} file(s) from {len(plan.generated)} template(s), fix the generator:"
    )
    for template, paths in sorted(plan.generated.items(), key=lambda kv: -len(kv[1])):
        out.append(f"  {template}  {len(paths)} file(s), e.g. {sorted(paths)[0]}")
    out.append(
        f"MENTIONS ONLY: {len(plan.mentions)} file(s)"
        + ("" if show_mentions else " (list them with --mentions)")
    )
    if show_mentions:
        for path, mention in sorted(plan.mentions.items()):
            out.append(f"  {path}  [{mention.count}]")
            for f in mention.findings:
                out.append(f"    {f.line}:{f.column} {f.category}: {f.message}")
            if mention.not_listed:
                out.append("    " + not_listed_line(path, mention.not_listed, plan.max_per_file))
    return "\n".join(out) + "\n"


def plan_json(plan: Plan, family: str) -> dict[str, object]:
    return {
        "family": family,
        "max_per_file": plan.max_per_file,
        "edits": [
            {
                "directory": directory,
                "files": [
                    {
                        "path": path,
                        "couplings": edit.count,
                        "findings": [f.as_dict() for f in edit.findings],
                        "not_listed": edit.not_listed,
                    }
                    for path, edit in files
                ],
            }
            for directory, files in ranked_edits(plan)
        ],
        "edit_counts": dict(sorted(edit_counts(plan).items())),
        "moves": [{"path": p, "criterion": r} for p, r in sorted(plan.moves.items())],
        "generated": [
            {"template": t, "files": sorted(p)} for t, p in sorted(plan.generated.items())
        ],
        "mentions_only": [
            {
                "path": p,
                "count": m.count,
                "findings": [f.as_dict() for f in m.findings],
                "not_listed": m.not_listed,
            }
            for p, m in sorted(plan.mentions.items())
        ],
    }
