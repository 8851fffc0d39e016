"""The move plan: where each file of a device target goes in the RFC's tree, the
``git mv`` script that does it, how includes keep working, and which staying files
include a moving header (the decoupling work the RFC keeps in ``torch_patches/``).

Outputs (relative to the emit directory):

* ``moves.tsv``        ``source, destination, module, reason`` for every moving file
* ``moves.sh``         ``git mv`` of each row; quotes every path, refuses a dirty tree
* ``include_map.tsv``  ``include, file, library``: every moving header keeps its include
                       spelling, served from its new place by a header library with
                       Bazel's ``include_prefix`` (see ``header_groups``)
* ``headers_left.tsv`` ``header, directory, why``: headers beside moved sources that
                       stay (a human decides), with a file list or source tree only
* ``core_patches.tsv`` ``file, line, include, moved_to``: files that stay in core (of
                       the ``--include-tree``, CUDA-named ones left out) and include a
                       moving header

Headers follow their sources: with the tree's file list, a header with the stem of a
moving source moves with it, and a directory all of whose sources move to one place
takes the rest of its files along (headers, ``.in`` templates, its tests); upstream's
own Bazel files there (``BUILD.bazel``, ``build.bzl``) are listed as superseded, since
the overlay's targets replace them.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.reorg.classify import Classification
from torchsplit.reorg.rules import RuleSet

SCRIPT = "moves.sh"
# Where upstream's includes are rooted: <ATen/cuda/X.h> is aten/src/ATen/cuda/X.h.
_INCLUDE_ROOTS = ("aten/src/", "")
# Prefixes dropped under csrc/<module>/ (the module name is dropped too when repeated).
# c10/cuda lands in csrc/framework/cuda, the RFC's Phase 1 place for it.
_STRIP = ("torch/csrc/", "aten/src/ATen/", "aten/src/", "torch/", "c10/")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
_SCANNED = (".h", ".hpp", ".cuh", ".cpp", ".cc", ".cu", ".inl")
_SOURCES = (".c", ".cc", ".cpp", ".cu")
HEADERS = (".h", ".hpp", ".hh", ".cuh", ".inl")
# Upstream's Bazel files in a moving directory: the overlay's targets replace them.
UPSTREAM_BAZEL = ("BUILD", "BUILD.bazel", "build.bzl")


@dataclass(frozen=True)
class Move:
    source: str
    destination: str
    module: str
    reason: str
    target: str = ""  # label of the target the file belongs to


@dataclass
class Plan:
    moves: list[Move] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # two files bound for one place
    left_behind: list[tuple[str, str, str]] = field(default_factory=list)  # header, dir, why
    superseded: list[str] = field(default_factory=list)  # upstream Bazel files of moved dirs

    def mapping(self) -> dict[str, str]:
        return {m.source: m.destination for m in self.moves}


def destination(source: str, package: str, module: str) -> str:
    """``third_device/torch_cuda`` + ``distributed`` + ``torch/csrc/distributed/c10d/X.cpp``
    -> ``third_device/torch_cuda/csrc/distributed/c10d/X.cpp``."""
    rest = source
    for prefix in _STRIP:
        if rest.startswith(prefix):
            rest = rest[len(prefix) :]
            break
    if rest.startswith(module + "/"):
        rest = rest[len(module) + 1 :]
    return f"{package}/csrc/{module}/{rest}"


def include_spelling(path: str) -> str:
    for root in _INCLUDE_ROOTS:
        if root and path.startswith(root):
            return path[len(root) :]
    return path


def _add(plan: Plan, taken: dict[str, str], move: Move) -> None:
    if move.destination in taken:
        plan.problems.append(
            f"{move.source} and {taken[move.destination]} would both move to {move.destination}"
        )
        return
    taken[move.destination] = move.source
    plan.moves.append(move)


def plan(result: Classification, ruleset: RuleSet, files: Iterable[str] | None = None) -> Plan:
    """Moves of every file placed in a ``third_device/`` target; with ``files`` (the
    tree's file list) also the headers and directory contents that follow them."""
    out = Plan()
    taken: dict[str, str] = {}
    for source in sorted(result.decisions):
        decision = result.decisions[source]
        target = ruleset.target_by_label(decision.target)
        if target is None or not target.package.startswith("third_device/"):
            continue
        if decision.role not in ("source", "header", "data"):
            continue
        dest = destination(source, target.package, target.module)
        why = f"{decision.rule}: {decision.reason}"
        _add(out, taken, Move(source, dest, target.module, why, target.label))
    if files is not None:
        _follow(out, taken, result, ruleset, sorted(set(files)))
    out.moves.sort(key=lambda m: m.source)
    return out


def _follow(
    plan: Plan, taken: dict[str, str], result: Classification, ruleset: RuleSet, files: list[str]
) -> None:
    """Headers with a moving source's stem move with it; a directory whose sources all
    move to one directory takes the rest of its files (subdirectories with no placed file,
    such as tests, included); other headers beside moved sources are left, and listed."""
    moving = {m.source: m for m in plan.moves}
    by_dir: dict[str, list[str]] = {}
    for f in files:
        by_dir.setdefault(posixpath.dirname(f), []).append(f)
    placed = set(result.decisions)
    placed_dirs = {posixpath.dirname(p) for p in placed}
    for move in list(plan.moves):
        if not move.source.endswith(_SOURCES):
            continue
        stem = posixpath.splitext(move.source)[0]
        for suffix in HEADERS:
            header = stem + suffix
            if header in by_dir.get(posixpath.dirname(move.source), ()) and header not in moving:
                dest = posixpath.splitext(move.destination)[0] + suffix
                follow = Move(header, dest, move.module, f"header of {move.source}", move.target)
                _add(plan, taken, follow)
                moving[header] = follow
    for directory in sorted(by_dir, key=lambda d: (d.count("/"), d)):
        mine = by_dir[directory]
        moved = [moving[f] for f in mine if f in moving]
        if not moved:
            continue
        sources = [f for f in mine if f.endswith(_SOURCES)]
        dests = {posixpath.dirname(m.destination) for m in moved if m.source.endswith(_SOURCES)}
        whole = bool(sources) and all(f in moving for f in sources) and len(dests) == 1
        if not whole:
            # Flag what a human must place: headers of a directory whose sources all
            # move (to several places), and CUDA-named headers beside a moved source.
            all_move = bool(sources) and all(f in moving for f in sources)
            for f in mine:
                if not f.endswith(HEADERS) or f in moving or f in placed:
                    continue
                if not (all_move or ruleset.name_is_cuda(f)):
                    continue
                where = ", ".join(sorted({m.target for m in moved}))
                if all_move:
                    why = f"every source here moves, to {len(dests)} directories ({where})"
                else:
                    why = f"named for CUDA, beside sources that move to {where}"
                plan.left_behind.append((f, directory, why + "; it stays until a human places it"))
            continue
        dest_dir = dests.pop()
        template = next(m for m in moved if m.source.endswith(_SOURCES))
        prefix = directory + "/"
        for f in files:
            if not f.startswith(prefix) or f in moving:
                continue
            sub = posixpath.dirname(f)
            # Files of this directory, and of subdirectories where nothing was placed.
            between = sub[len(prefix) :].split("/") if sub != directory else []
            if any(prefix + "/".join(between[: i + 1]) in placed_dirs for i in range(len(between))):
                continue
            if posixpath.basename(f) in UPSTREAM_BAZEL:
                plan.superseded.append(f)
                continue
            dest = dest_dir + "/" + f[len(prefix) :]
            why = f"in {directory}/, all of whose sources move to {dest_dir}/"
            follow = Move(f, dest, template.module, why, template.target)
            _add(plan, taken, follow)
            moving[f] = follow


OVERLAY_MOVED = "overlay_moved"


def render_script(moves: list[Move], overlay: list[str] = ()) -> str:  # type: ignore[assignment]
    """``moves.sh``. With ``overlay`` (the files of ``overlay_moved/`` beside the script),
    it then writes the post-move overlay into the checkout, so that the BUILD files name
    the new paths and the checkout analyses right after the move."""
    lines = [
        "#!/bin/sh\n",
        "# Generated by `torchsplit reorg emit`: applies moves.tsv with `git mv`, then\n",
        f"# writes the overlay whose BUILD files name the new paths ({OVERLAY_MOVED}/).\n",
        "# Run it from anywhere inside the PyTorch checkout; it refuses a dirty tree so the\n",
        "# move is one reviewable change.\n",
        "set -eu\n",
        'here="$(cd "$(dirname "$0")" && pwd)"\n',
        'cd "$(git rev-parse --show-toplevel)"\n',
        'if [ -n "$(git status --porcelain)" ]; then\n',
        '    echo "moves.sh: the working tree has uncommitted changes; commit them first" >&2\n',
        "    exit 1\n",
        "fi\n",
        # The source directory goes when the move empties it (git tracks no directories).
        'move() { mkdir -p -- "$(dirname -- "$2")" && git mv -- "$1" "$2" &&\n',
        '    { rmdir -p -- "$(dirname -- "$1")" 2>/dev/null || true; }; }\n',
    ]
    lines.extend(f"move {shlex.quote(m.source)} {shlex.quote(m.destination)}\n" for m in moves)
    lines.append(f'echo "moves.sh: moved {len(moves)} files"\n')
    if overlay:
        lines.append(
            f'install() {{ mkdir -p -- "$(dirname -- "$1")" && cp -- "$here/{OVERLAY_MOVED}/$1" '
            '"$1" && git add -- "$1"; }\n'
        )
        lines.extend(f"install {shlex.quote(rel)}\n" for rel in sorted(overlay))
        lines.append(
            f'echo "moves.sh: wrote the post-move overlay ({len(overlay)} files from '
            f'{OVERLAY_MOVED}/)"\n'
        )
    return "".join(lines)


@dataclass(frozen=True)
class HeaderGroup:
    """Headers of one target that keep one include spelling root from one new place:
    ``strip`` (package-relative directory) is served as ``prefix`` (Bazel's
    ``strip_include_prefix`` / ``include_prefix``)."""

    target: str
    name: str
    strip: str
    prefix: str
    headers: tuple[str, ...]  # package-relative paths


def _mapping_roots(new_rel: str, spelling: str) -> tuple[str, str]:
    """The shortest (new directory, include root) pair that maps ``spelling`` onto the
    package-relative ``new_rel``: their longest common trailing path is dropped."""
    new_parts, old_parts = new_rel.split("/"), spelling.split("/")
    common = 0
    while (
        common < min(len(new_parts), len(old_parts)) - 1
        and new_parts[-1 - common] == old_parts[-1 - common]
    ):
        common += 1
    common = max(common, 1)
    return "/".join(new_parts[:-common]), "/".join(old_parts[:-common])


def header_groups(moves: list[Move], ruleset: RuleSet) -> list[HeaderGroup]:
    """Every moving header, grouped per target by (new directory, include root)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for m in moves:
        if not m.destination.endswith(HEADERS) or not m.target:
            continue
        target = ruleset.target_by_label(m.target)
        if target is None:
            continue
        rel = m.destination[len(target.package) + 1 :]
        strip, prefix = _mapping_roots(rel, include_spelling(m.source))
        groups.setdefault((m.target, strip, prefix), []).append(rel)
    out: list[HeaderGroup] = []
    counts: dict[str, int] = {}
    for (label, strip, prefix), headers in sorted(groups.items()):
        name = label.rsplit(":", 1)[1]
        counts[name] = counts.get(name, 0) + 1
        out.append(
            HeaderGroup(
                label, f"{name}_headers_{counts[name]}", strip, prefix, tuple(sorted(headers))
            )
        )
    return out


def include_map(moves: list[Move]) -> dict[str, str]:
    """Old include spelling -> the moved file, for moving headers."""
    return {include_spelling(m.source): m.destination for m in moves if m.source.endswith(HEADERS)}


def core_patches(
    include_tree: str | Path,
    mapping: dict[str, str],
    ruleset: RuleSet,
    moving: set[str] = frozenset(),
) -> list[tuple[str, int, str, str]]:
    """Files of ``include_tree`` that stay in core and include a moving header. A file that
    moves, or looks CUDA by its path (it moves with the device code once the whole tree
    is known), is no core patch."""
    root = Path(include_tree)
    if not root.is_dir():
        raise TorchsplitError("no such directory (--include-tree)", path=str(include_tree))
    rows: list[tuple[str, int, str, str]] = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(names):
            if not name.endswith(_SCANNED):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel in mapping or rel in moving or ruleset.name_is_cuda(rel):
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise TorchsplitError(f"cannot read: {exc.strerror}", path=str(path)) from exc
            if "#" not in text:
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                m = _INCLUDE.match(line)
                if m and m.group(1) in mapping:
                    rows.append((rel, number, m.group(1), mapping[m.group(1)]))
    return sorted(rows)


def _tsv(value: str) -> str:
    return value.replace("\t", " ").replace("\n", " ")


def render_plan(
    result: Classification,
    ruleset: RuleSet,
    *,
    include_tree: str | Path | None = None,
    files: Iterable[str] | None = None,
    overlay: dict[str, str] | None = None,
) -> dict[str, str]:
    """The move plan's files; ``overlay`` (relative path -> text, the overlay after the
    move) goes to ``overlay_moved/``, and ``moves.sh`` installs it."""
    the_plan = plan(result, ruleset, files)
    moves = the_plan.moves
    overlay = overlay or {}
    out = {f"{OVERLAY_MOVED}/{rel}": text for rel, text in overlay.items()}
    out |= {
        "moves.tsv": "source\tdestination\tmodule\treason\n"
        + "".join(
            f"{_tsv(m.source)}\t{_tsv(m.destination)}\t{m.module}\t{_tsv(m.reason)}\n"
            for m in moves
        ),
        SCRIPT: render_script(moves, list(overlay)),
    }
    library = {
        f"{g.target[2:].split(':')[0]}/{h}": f"{g.target.split(':')[0]}:{g.name}"
        for g in header_groups(moves, ruleset)
        for h in g.headers
    }
    mapping = include_map(moves)
    out["include_map.tsv"] = "include\tfile\tlibrary\n" + "".join(
        f"{old}\t{new}\t{library.get(new, '')}\n" for old, new in sorted(mapping.items())
    )
    if the_plan.problems:
        out["move_problems.txt"] = "".join(f"{p}\n" for p in the_plan.problems)
    if files is not None:
        out["headers_left.tsv"] = "header\tdirectory\twhy\n" + "".join(
            f"{h}\t{d}\t{_tsv(w)}\n" for h, d, w in sorted(the_plan.left_behind)
        )
    if include_tree is not None:
        rows = core_patches(include_tree, mapping, ruleset, {m.source for m in moves})
        out["core_patches.tsv"] = "file\tline\tinclude\tmoved_to\n" + "".join(
            f"{f}\t{n}\t{inc}\t{new}\n" for f, n, inc, new in rows
        )
    return out
