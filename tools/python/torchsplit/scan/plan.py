"""``torchsplit scan --plan``: the maintainer's work list, one action per bucket.

Every scanned file with something to say falls in exactly one bucket:

* **moves** -- the file leaves core: the RFC's inter-file criteria (a ``cuda/``,
  ``cudnn/``, ``THC/`` directory -- plus ``hip/``, ``miopen/`` for ROCm --, a name
  containing "cuda", a ``.cu``/``.cuh`` file), a directory or file named by a vendor
  (``codegen/rocm/``, ``ProcessGroupNCCL.hpp``), or code that is all the vendor's by its
  couplings (every line inside vendor-side ``#if`` branches, an unconditional vendor
  include, a module-level import of a vendor SDK); or exactly the move set of ``reorg
  emit``'s ``moves.tsv`` when one is given;
* **torchgen** -- a generated file that would move: the action is to make the generator
  emit it under ``third_device/<backend>``, one entry per generator template;
* **generated** -- the generator templates whose output stays in core but carries
  couplings: template -> the files it produces -> their couplings (generated files
  without couplings are only counted);
* **edits** -- the file stays and carries code couplings, each with the seam to use;
* **other backend** -- in a single-vendor view, another vendor's backend file (``hip/``
  under ``--family cuda``): neither a core edit nor this view's move;
* **third party** -- a vendored dependency (``include/fmt``, ``include/kineto``,
  ``third_party/``, ``_vendor/``): not torch's code to change;
* **mentions only** -- the file stays and only names a vendor in comments or strings
  (or includes the declaration of a vendor-named operator, ``ATen/ops/cudnn_*.h``).

Counts include the findings a per-file limit (``--max-per-file``) left unlisted.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit import vendors
from torchsplit.errors import TorchsplitError
from torchsplit.scan.scanner import (
    CATEGORIES,
    NON_CODE_CATEGORIES,
    TORCH_ROOTS,
    FileResult,
    Finding,
    families_of,
    vendor_words,
)

# The seam a maintainer uses to remove each kind of coupling from a file that stays.
SEAMS: dict[str, str] = {
    "use-cuda-guard": "build split: the guarded code moves to the backend's target, core "
    "reaches it through a device-generic hook or registry",
    "cuda-compiler-macro": "backend-injected qualifiers: a macro the backend's compile flags "
    "define (core never names the compiler)",
    "cuda-api-macro": "the macro moves with the backend; core uses a device-generic "
    "export/check macro",
    "vendor-api": "device-generic hook: the vendor call moves to the backend, core calls its "
    "hooks interface",
    "vendor-setting": "backend settings registry: the backend owns its flags, core keeps a "
    "per-backend setting",
    "is-cuda": "DeviceType switch -> device registry: ask the registered device, not is_cuda()",
    "device-type-cuda": "DeviceType switch -> device registry: the backend registers its "
    "behaviour for its device type",
    "cuda-device-string": "device registry: the accelerator's registered name, not a literal",
    "dlopen": "plugin: the backend loads its own libraries",
    "cuda-include": "device-generic hook: include the hooks interface; the vendor header "
    "moves with the backend",
    "backend-include": "device-generic hook: include the device-generic interface, not the "
    "backend's header",
    "moved-include": "device-generic hook: include the device-generic interface, not the "
    "moved file",
    "python-torch-cuda": "device registry: torch.accelerator, or the backend package found "
    "through the torch.backends entry point",
    "vendor-identifier": "device-generic hook or registry (or a device-neutral name)",
}
# A seam's short name (the part before the colon), for summaries.
SEAM_NAMES = {c: s.split(":", 1)[0] for c, s in SEAMS.items()}


@dataclass
class PlanFile:
    """One file's findings in a bucket: those listed, and exact counts of all of them."""

    findings: list[Finding]  # listed (for edits: the code couplings only)
    count: int  # listed or not
    categories: Counter[str]  # listed or not (for edits: the code categories only)

    @property
    def not_listed(self) -> int:
        return self.count - len(self.findings)

    def seams(self) -> list[tuple[str, list[str]]]:
        """(seam, categories) for this file's code categories, most couplings first."""
        by_seam: dict[str, list[str]] = {}
        for category, _ in self.categories.most_common():
            if category in SEAMS:
                by_seam.setdefault(SEAM_NAMES[category], []).append(category)
        return list(by_seam.items())


@dataclass
class Move:
    criterion: str
    family: str


@dataclass
class Plan:
    moves: dict[str, Move] = field(default_factory=dict)
    edits: dict[str, PlanFile] = field(default_factory=dict)
    # template -> generated files that would move (make the generator emit them elsewhere)
    torchgen: dict[str, dict[str, Move]] = field(default_factory=dict)
    # template -> generated files that stay and carry couplings
    generated: dict[str, dict[str, PlanFile]] = field(default_factory=dict)
    generated_clean: int = 0  # generated files that stay and carry no coupling
    # template -> generated files that only declare vendor-named operators
    generated_ops: dict[str, int] = field(default_factory=dict)
    other_backend: dict[str, Move] = field(default_factory=dict)
    third_party: dict[str, PlanFile] = field(default_factory=dict)
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


def third_party(path: str, base: str = ".") -> bool:
    """Whether ``path`` (relative to ``base``) is a vendored dependency, not torch's code.

    ``third_party/`` and ``_vendor/`` directories, and a header directory's top-level
    entries that are not torch's (``include/fmt``, ``include/kineto``, ``include/fp16.h``).
    """
    parts = path.split("/")
    if "third_party" in parts[:-1] or "_vendor" in parts[:-1]:
        return True
    for i, part in enumerate(parts[:-1]):
        if part == "include":
            return parts[i + 1] not in TORCH_ROOTS
    if os.path.basename(os.path.normpath(os.path.abspath(base))) == "include":
        return parts[0] not in TORCH_ROOTS and parts[0] != ".."
    return False


def _named_by_vendor(path: str) -> tuple[str, str] | None:
    """(family, criterion) when a directory or the file name of ``path`` names a vendor."""
    parts = path.split("/")
    for directory in parts[:-1]:
        fam = _vendor_directory(directory)
        if fam is not None:
            return fam, f"directory {directory}/ names a vendor"
    fams = families_of(parts[-1].split(".", 1)[0])
    if fams:
        return fams[0], "file name names a vendor"
    return None


def _vendor_directory(directory: str) -> str | None:
    """The family when a directory is named by a vendor word (``rocm``, ``cusparselt``)."""
    lower = directory.lower()
    for word, fam in vendor_words(directory).items():
        if lower == word or (word in _PREFIX_WORDS and lower.startswith(word)):
            return fam
    return None


_PREFIX_WORDS = frozenset(w for ws in vendors.SOURCE_PREFIX_WORDS.values() for w in ws)


def move_of(result: FileResult | None, path: str, moves_tsv: set[str] | None) -> Move | None:
    """Why ``path`` leaves core, and to which vendor's backend (any vendor)."""
    if moves_tsv is not None:
        if path in moves_tsv or any(path.endswith("/" + m) for m in moves_tsv if "/" in m):
            return Move("moves.tsv", (families_of(path) or ("cuda",))[0])
        return None
    hit = vendors.move_family(path)
    if hit is not None:
        return Move(hit[1], hit[0])
    generated = result is not None and result.generated is not None
    if not generated:
        named = _named_by_vendor(path)
        if named is not None:
            return Move(named[1], named[0])
    if result is not None and result.vendor_code is not None and not generated:
        fams, reason = result.vendor_code
        return Move(f"code is all {'/'.join(_FAMILY_NAMES[f] for f in fams)}: {reason}", fams[0])
    return None


_FAMILY_NAMES = {"cuda": "CUDA", "rocm": "ROCm"}


def _code(finding: Finding) -> bool:
    return not NON_CODE_CATEGORIES.issuperset(finding.categories)


def _edit(result: FileResult) -> PlanFile:
    """The file's code couplings (not prose, not the operator registry's declarations)."""
    listed = [f for f in result.findings if _code(f)]
    counts = Counter(c for f in listed for c in f.categories if c not in NON_CODE_CATEGORIES)
    for category, n in result.unlisted.categories.items():
        if category not in NON_CODE_CATEGORIES:
            counts[category] += n
    return PlanFile(listed, len(listed) + result.unlisted.code, counts)


def _in_view(move: Move, family: str, result: FileResult | None) -> bool:
    """Whether a move belongs to this view's backend (the whole-GPU view takes them all)."""
    if family == "all" or move.family == family:
        return True
    # A file all of whose code both vendors share (#if defined(USE_CUDA) || USE_ROCM).
    return bool(result and result.vendor_code and family in result.vendor_code[0])


def build_plan(
    files: list[FileResult],
    family: str,
    moves_tsv: set[str] | None,
    paths: Iterable[str] = (),
    max_per_file: int = 0,
    base: str = ".",
) -> Plan:
    """Bucket ``files``; ``paths`` (every scanned file) adds the moves without findings."""
    plan = Plan(max_per_file=max_per_file)
    by_path = {r.path: r for r in files}
    paths = list(paths)
    following = {} if moves_tsv is not None else _headers_of_cu_files(paths)
    for path in paths:
        result = by_path.get(path)
        if result is not None and (result.error or result.note):
            continue
        if third_party(path, base):
            if result is not None and _edit(result).count:
                plan.third_party[path] = _edit(result)
            continue
        template = _template_of(result, path)
        move = move_of(result, path, moves_tsv) or following.get(path)
        if move is not None:
            if not _in_view(move, family, result):
                plan.other_backend[path] = move
            elif template is not None:
                plan.torchgen.setdefault(template, {})[path] = move
            else:
                plan.moves[path] = move
            continue
        if result is None:
            continue
        edit = _edit(result)
        if template is not None:
            if edit.count:
                plan.generated.setdefault(template, {})[path] = edit
            elif result.category_counts()["vendor-op"]:
                plan.generated_ops[template] = plan.generated_ops.get(template, 0) + 1
            elif result.generated is not None:
                plan.generated_clean += 1
        elif edit.count:
            plan.edits[path] = edit
        elif result.total:
            plan.mentions[path] = PlanFile(result.findings, result.total, result.category_counts())
    return plan


_HEADER_SUFFIXES = (".h", ".hpp", ".cuh")
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".mm")
HEADER_OF_CU = "header of a .cu file"


def _headers_of_cu_files(paths: list[str]) -> dict[str, Move]:
    """A header that follows its ``.cu`` source out of core: ``X.h`` beside ``X.cu``.

    Only when no ``X.cpp`` (or another host source) sits beside them: a header shared by
    a host source and a kernel (``intra_node_comm.hpp``) stays, and its couplings are edits.
    """
    stems: dict[str, set[str]] = {}
    for path in paths:
        stem, suffix = os.path.splitext(path)
        stems.setdefault(stem, set()).add(suffix)
    moves: dict[str, Move] = {}
    for stem, suffixes in stems.items():
        if ".cu" not in suffixes or suffixes & set(_SOURCE_SUFFIXES):
            continue
        hit = vendors.move_family(stem + ".cu")
        family = hit[0] if hit is not None else "cuda"
        for suffix in suffixes & set(_HEADER_SUFFIXES):
            moves[stem + suffix] = Move(HEADER_OF_CU, family)
    return moves


def _template_of(result: FileResult | None, path: str) -> str | None:
    """The generator template behind a file: its ``@generated`` marker's, or the file itself
    when it is a template in a source tree (``aten/src/ATen/templates/TensorBody.h``)."""
    if result is not None and result.generated is not None:
        return result.generated
    if "templates" in path.split("/")[:-1]:
        return f"{path} (template)"
    return None


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


def seam_counts(plan: Plan) -> Counter[str]:
    """Files per seam among the edits."""
    counts: Counter[str] = Counter()
    for edit in plan.edits.values():
        counts.update(seam for seam, _ in edit.seams())
    return counts


def backend_target(family: str) -> str:
    return "third_device/torch_cuda" if family == "cuda" else "third_device/torch_rocm"


def not_listed_line(path: str, count: int, limit: int) -> str:
    return f"{path}: {count} more finding(s) not listed (--max-per-file {limit})"


def _summary(counts: Counter[str]) -> str:
    return ", ".join(f"{c} {n}" for c, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def _generated_totals(files: dict[str, PlanFile]) -> tuple[int, Counter[str]]:
    counts: Counter[str] = Counter()
    for edit in files.values():
        counts.update(edit.categories)
    return sum(e.count for e in files.values()), counts


def render_plan(plan: Plan, family: str, *, show_mentions: bool, show_moves: bool) -> str:
    out: list[str] = []
    couplings = sum(e.count for e in plan.edits.values())
    counts = edit_counts(plan)
    out.append(
        f"EDITS ({family}): {len(plan.edits)} file(s) stay in core with {couplings} code "
        "coupling(s)"
    )
    out.append("  by category: " + ", ".join(f"{c} {counts[c]}" for c in CATEGORIES if counts[c]))
    out.append("  by seam (files): " + _summary(seam_counts(plan)))
    for directory, files in ranked_edits(plan):
        total = sum(e.count for _, e in files)
        out.append("")
        out.append(f"== {directory}/  ({len(files)} file(s), {total} coupling(s))")
        for path, edit in files:
            out.append(f"  {path}  [{edit.count}: {_summary(edit.categories)}]")
            for _seam, cats in edit.seams():
                out.append(f"    seam: {SEAMS[cats[0]]}  ({', '.join(cats)})")
            for f in edit.findings:
                out.append(f"    {f.line}:{f.column} {'+'.join(f.categories)}: {f.message}")
            if edit.not_listed:
                out.append("    " + not_listed_line(path, edit.not_listed, plan.max_per_file))
    out.append("")
    by_reason = Counter(_criterion_kind(m.criterion) for m in plan.moves.values())
    out.append(
        f"MOVES: {len(plan.moves)} file(s) leave core ("
        + ", ".join(f"{r} {n}" for r, n in by_reason.most_common())
        + ")"
    )
    if show_moves:
        out.extend(f"  {p}  ({m.criterion})" for p, m in sorted(plan.moves.items()))
    n_gen = sum(len(p) for p in plan.torchgen.values())
    out.append(
        f"TORCHGEN: {n_gen} generated file(s) would move, from {len(plan.torchgen)} "
        "template(s): make the generator emit them under third_device"
    )
    for template, moved in sorted(plan.torchgen.items(), key=lambda kv: -len(kv[1])):
        fams = sorted({m.family for m in moved.values()})
        target = ", ".join(backend_target(f) for f in fams)
        out.append(f"  {template}: {len(moved)} file(s) -> {target} (e.g. {min(moved)})")
    n_files = sum(len(p) for p in plan.generated.values())
    out.append(
        f"GENERATED: {len(plan.generated)} template(s) whose output stays in core with "
        f"couplings ({n_files} file(s)); fix the template. {plan.generated_clean} generated "
        "file(s) without couplings not listed"
    )
    if plan.generated_ops:
        out.append(
            f"  ({sum(plan.generated_ops.values())} more generated file(s) from "
            f"{len(plan.generated_ops)} template(s) only declare vendor-named operators, e.g. "
            "cudnn_convolution: native_functions.yaml entries whose schema stays in core)"
        )
    for template, files in sorted(plan.generated.items(), key=lambda kv: -len(kv[1])):
        total, cats = _generated_totals(files)
        out.append(f"  {template}: {len(files)} file(s), {total} coupling(s) [{_summary(cats)}]")
        for path, edit in sorted(files.items(), key=lambda kv: (-kv[1].count, kv[0]))[:5]:
            out.append(f"    {path}  [{edit.count}: {_summary(edit.categories)}]")
        if len(files) > 5:
            out.append(f"    ... {len(files) - 5} more (all in --format json)")
    if plan.other_backend:
        fams = sorted({m.family for m in plan.other_backend.values()})
        out.append(
            f"OTHER BACKEND: {len(plan.other_backend)} file(s) of the "
            f"{'/'.join(_FAMILY_NAMES[f] for f in fams)} backend (not core edits in this view)"
        )
        if show_moves:
            out.extend(f"  {p}  ({m.criterion})" for p, m in sorted(plan.other_backend.items()))
    if plan.third_party:
        out.append(
            f"THIRD PARTY: {len(plan.third_party)} vendored dependency file(s) with code "
            "couplings (not torch's code to change):"
        )
        for path, edit in sorted(plan.third_party.items()):
            out.append(f"  {path}  [{edit.count}: {_summary(edit.categories)}]")
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


def _criterion_kind(criterion: str) -> str:
    """A move criterion without its details, for the per-criterion count."""
    if criterion.startswith("code is all"):
        return criterion.split(":", 1)[0]
    if criterion.startswith("directory ") and criterion.endswith("names a vendor"):
        return "directory names a vendor"
    return criterion


def _file_json(path: str, edit: PlanFile) -> dict[str, object]:
    return {
        "path": path,
        "couplings": edit.count,
        "categories": dict(sorted(edit.categories.items())),
        "seams": [{"seam": SEAMS[cats[0]], "categories": cats} for _, cats in edit.seams()],
        "findings": [f.as_dict() for f in edit.findings],
        "not_listed": edit.not_listed,
    }


def plan_json(plan: Plan, family: str) -> dict[str, object]:
    return {
        "family": family,
        "max_per_file": plan.max_per_file,
        "edits": [
            {"directory": directory, "files": [_file_json(p, e) for p, e in files]}
            for directory, files in ranked_edits(plan)
        ],
        "edit_counts": dict(sorted(edit_counts(plan).items())),
        "seam_counts": dict(sorted(seam_counts(plan).items())),
        "moves": [
            {"path": p, "criterion": m.criterion, "family": m.family}
            for p, m in sorted(plan.moves.items())
        ],
        "torchgen": [
            {
                "template": t,
                "target": sorted({backend_target(m.family) for m in moved.values()}),
                "files": sorted(moved),
            }
            for t, moved in sorted(plan.torchgen.items())
        ],
        "generated": [
            {
                "template": t,
                "couplings": _generated_totals(files)[0],
                "files": [_file_json(p, e) for p, e in sorted(files.items())],
            }
            for t, files in sorted(plan.generated.items())
        ],
        "generated_without_couplings": plan.generated_clean,
        "generated_vendor_operators_only": dict(sorted(plan.generated_ops.items())),
        "other_backend": [
            {"path": p, "criterion": m.criterion, "family": m.family}
            for p, m in sorted(plan.other_backend.items())
        ],
        "third_party": [_file_json(p, e) for p, e in sorted(plan.third_party.items())],
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
