"""Self-check: does the classification of our own build_variables.bzl match the BUILD files?

Input is what ``bazel query`` says each target compiles. Accepted forms:

* sections, one per target, as produced by running for each target
  ``echo "# target: //T"; bazel query 'labels(srcs, //T)' --output=label``::

      # target: //core:torch_cpu
      //core:aten/native/BinaryOps.cpp
      //core/aten:native/Copy.cpp

* JSON ``{"//core:torch_cpu": ["//core:aten/native/BinaryOps.cpp", ...], ...}``

Labels map to repo-relative paths (``//pkg:a/b.cpp`` -> ``pkg/a/b.cpp``); external
(``@repo//``) labels are ignored. Only files with one of the compared suffixes count on
both sides (BUILD files may add headers that build_variables.bzl does not list).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.reorg.classify import Classification
from torchsplit.reorg.emit import generated_out

DEFAULT_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".mm")
_SECTION = re.compile(r"^#\s*target:\s*(\S+)\s*$")
_LABEL = re.compile(r"^(@[\w.~+-]*)?//([\w/.+-]*):([^\s]+)$")


@dataclass
class CheckResult:
    compared_targets: list[str] = field(default_factory=list)
    missing_in_build: dict[str, list[str]] = field(default_factory=dict)
    unexpected_in_build: dict[str, list[str]] = field(default_factory=dict)
    not_compared: dict[str, int] = field(default_factory=dict)  # excluded target -> files

    @property
    def ok(self) -> bool:
        return not self.missing_in_build and not self.unexpected_in_build

    def render(self) -> str:
        lines: list[str] = []
        for target in self.compared_targets:
            missing = self.missing_in_build.get(target, [])
            extra = self.unexpected_in_build.get(target, [])
            status = "ok" if not missing and not extra else "MISMATCH"
            lines.append(f"{target}: {status}")
            lines.extend(f"  - listed for it but not in its srcs: {p}" for p in missing)
            lines.extend(f"  + in its srcs but classified elsewhere: {p}" for p in extra)
        total = sum(len(v) for v in self.missing_in_build.values()) + sum(
            len(v) for v in self.unexpected_in_build.values()
        )
        verdict = "agree" if self.ok else f"disagree on {total} source(s)"
        for target, count in sorted(self.not_compared.items()):
            lines.append(f"{target}: not compared ({count} files out of scope, built nowhere)")
        lines.append(
            f"reorg check: {len(self.compared_targets)} targets; classification and "
            f"BUILD files {verdict}"
        )
        return "\n".join(lines) + "\n"


def label_to_path(label: str) -> str | None:
    """``//pkg:sub/file.cpp`` -> ``pkg/sub/file.cpp``; None for external or non-labels."""
    m = _LABEL.match(label.strip())
    if m is None or m.group(1):
        return None
    package, name = m.group(2), m.group(3)
    return f"{package}/{name}" if package else name


def parse_query_output(text: str, where: str) -> dict[str, set[str]]:
    """Parse recorded query output (sections or JSON) into target -> set(paths)."""
    stripped = text.lstrip()
    result: dict[str, set[str]] = {}
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TorchsplitError(f"invalid JSON: {exc.msg}", where, exc.lineno) from exc
        if not isinstance(data, dict):
            raise TorchsplitError("expected a JSON object {target: [labels]}", where)
        for target, labels in data.items():
            if not isinstance(labels, list):
                raise TorchsplitError(f"{target}: expected a list of labels", where)
            result[target] = {p for p in map(label_to_path, map(str, labels)) if p}
        return result
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        section = _SECTION.match(line)
        if section:
            current = section.group(1)
            result.setdefault(current, set())
            continue
        if line.startswith(("INFO:", "Loading:", "WARNING:", "#")):
            continue
        if current is None:
            raise TorchsplitError(
                "label before any '# target: //pkg:name' header (expected per-target sections "
                "or a JSON object)",
                where,
                number,
            )
        if _LABEL.match(line) is None:
            raise TorchsplitError(f"expected a Bazel label, got {line!r}", where, number)
        path = label_to_path(line)
        if path:
            result[current].add(path)
    return result


def srcs_query(target: str) -> str:
    """The query for the sources a standard target builds.

    Its own srcs, those of the target an alias points to (``:pybinding`` and
    ``//core:_C`` are aliases of the extension), and those of its device-kernel
    library. A rule among the srcs (the stand-in for generated files)
    counts with its outputs.
    """
    package, _, name = target.partition(":")
    # <name>_kernels: device_backend's .cu library; <name>_device_files: the device files
    # `reorg workspace`'s cuda_library stand-in carries beside its cc_library;
    # <name>_generator_inputs: the files a code generator reads for it.
    groups = "kernels|device_files|generator_inputs"
    kernels = f'attr(name, "^{re.escape(name)}_({groups})$", {package}:*)'
    srcs = f"labels(srcs, {target} + labels(actual, {target}) + {kernels})"
    return f"{srcs} + labels(outs, {srcs})"


def package_exists(target: str, workspace: str | Path) -> bool:
    package = target.partition(":")[0].removeprefix("//")
    return any((Path(workspace) / package / name).is_file() for name in ("BUILD.bazel", "BUILD"))


def run_bazel_query(bazel: str, targets: list[str], workspace: str | Path) -> dict[str, set[str]]:
    """Ask Bazel for each target's srcs (argument lists only; no shell)."""
    result: dict[str, set[str]] = {}
    for target in targets:
        cmd = [bazel, "query", srcs_query(target), "--output=label"]
        proc = subprocess.run(cmd, cwd=workspace, capture_output=True, text=True, check=False)
        if proc.returncode != 0 and f"no such target '{target}'" in proc.stderr:
            # Not declared (the overlay leaves out a target nothing is placed in):
            # it builds nothing.
            result[target] = set()
            continue
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
            raise TorchsplitError(f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{tail}")
        # An empty result exits 0 with "INFO: Empty results" on stderr: read stdout only.
        result[target] = {
            p for p in (label_to_path(x) for x in proc.stdout.split()) if p is not None
        }
    return result


def read_moves(path: str | Path) -> dict[str, str]:
    """``source -> destination`` of a ``moves.tsv`` (its header row skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TorchsplitError(f"cannot read the move plan: {exc.strerror}", str(path)) from exc
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        cells = line.split("\t")
        if number == 1 and cells[:2] == ["source", "destination"]:
            continue
        if len(cells) < 2 or not cells[0] or not cells[1]:
            raise TorchsplitError("expected source<TAB>destination<TAB>...", str(path), number)
        out[cells[0]] = cells[1]
    return out


def compare(
    result: Classification,
    actual: dict[str, set[str]],
    suffixes: tuple[str, ...] = DEFAULT_SUFFIXES,
    *,
    moved: dict[str, str] | None = None,
    excluded: set[str] | frozenset[str] = frozenset(),
) -> CheckResult:
    """Classification vs BUILD files; ``moved`` gives the paths after a carried-out move
    plan, and ``excluded`` targets (out of scope, declared nowhere) are not compared."""
    moved = moved or {}

    def keep(path: str) -> bool:
        return path.endswith(suffixes)

    def where(label: str, source: str) -> str:
        # A generated entry is the output of the target's stand-in, in its package.
        if result.decisions[source].role == "generated":
            return f"{label[2:].split(':', 1)[0]}/{generated_out(source)}"
        return moved.get(source, source)

    expected = {
        label: {p for p in (where(label, s) for s in sources) if keep(p)}
        for label, sources in result.by_target().items()
    }
    check = CheckResult()
    for label in excluded:
        if expected.get(label):
            check.not_compared[label] = len(expected.pop(label))
        expected.pop(label, None)
    targets = sorted(set(expected) | set(actual))
    for target in targets:
        want = expected.get(target, set())
        have = {p for p in actual.get(target, set()) if keep(p)}
        if target not in actual and not want:
            continue  # a target the config knows but which lists nothing and was not queried
        check.compared_targets.append(target)
        if want - have:
            check.missing_in_build[target] = sorted(want - have)
        if have - want:
            check.unexpected_in_build[target] = sorted(have - want)
    return check
