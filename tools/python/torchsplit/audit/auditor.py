"""``torchsplit audit``: forbidden dependencies of the layering policy, explained hop by hop.

For every (from, to) pair the policy gives (tools/layering/policy.bzl, expanded
over the packages that exist), the audit asks Bazel:

* ``bazel query 'somepath(F, T)'`` (unconfigured: every select() branch);
* ``bazel cquery 'somepath(F, T)'`` (configured: what this build really links);
* ``bazel query 'visible(//pkg:*, T)'`` for every package of F (a target F may
  see is an edge visibility no longer stops);

and, for the header layer, runs the coupling scanner (torchsplit.scan.scanner) over the
source directories of F. The clean case costs four Bazel calls (the package
listing, query, cquery, visible()); each violation
then gets one ``--output=xml`` query for its path and one cquery.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import xml.etree.ElementTree as ET
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path

from torchsplit.audit.policy import Pair, Pattern, Policy, expand
from torchsplit.bazel_run import Bazel, BazelFailed, error_lines
from torchsplit.scan.scanner import MovedFiles, iter_files, scan_paths

# Errors cquery reports when the layering aspect (which .bazelrc attaches to every
# build, cquery included) fails: expected on a repository with violations.
_ASPECT_ERROR = re.compile(
    r"layering_check aspect on |Analysis of aspect '[^']*layering_check|"
    r"command succeeded, but not all targets were analyzed"
)
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".cuh", ".inl")
_INCLUDE = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')
_VISIBILITY_ERROR = re.compile(r"^ERROR: .* is not visible from target ", re.MULTILINE)


@dataclass
class Hop:
    label: str
    kind: str
    location: str  # BUILD file:line:column of the rule (or the file's own path)
    attribute: str = ""  # attribute of the previous hop that names this one


@dataclass
class Violation:
    rule: str
    why: str
    source: str
    target: str
    path: list[Hop]
    query: str
    configured: bool | None = None  # in the configured graph (cquery)?

    def render(self) -> str:
        where = {
            True: "in the configured build (cquery) and the unconfigured graph (query)",
            False: "only in the unconfigured graph: an inactive select() branch",
            None: "in the unconfigured graph (query)",
        }[self.configured]
        lines = [
            f"VIOLATION [{self.rule}] {self.source} cannot depend on {self.target}",
            f"  why: {self.why}",
            f"  found {where}",
            f"  path ({len(self.path) - 1} hop(s)):",
            f"    {self.path[0].label}  ({self.path[0].kind}, {self.path[0].location})",
        ]
        for prev, hop in zip(self.path, self.path[1:], strict=False):
            attr = hop.attribute or "an implicit attribute"
            lines.append(
                f"      -> {hop.label}  (via {attr} of {prev.label}, declared at {prev.location})"
            )
        lines.append(f"  see: bazel query '{self.query}'")
        return "\n".join(lines)


@dataclass
class VisibilityLeak:
    rule: str
    target: str
    visible_to: str
    location: str

    def render(self) -> str:
        return (
            f"VISIBILITY [{self.rule}] {self.target} is visible to //{self.visible_to}, which "
            f"the policy forbids to depend on it ({self.location}); narrow its visibility"
        )


@dataclass
class HeaderFinding:
    rule: str
    path: str
    line: int
    message: str
    text: str

    def render(self) -> str:
        return f"HEADER [{self.rule}] {self.path}:{self.line}: {self.message}\n    {self.text}"


@dataclass
class AuditResult:
    policy: str
    pairs: list[dict[str, str]] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    visibility: list[VisibilityLeak] = field(default_factory=list)
    headers: list[HeaderFinding] = field(default_factory=list)
    bazel_calls: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.violations or self.visibility or self.headers)

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["ok"] = self.ok
        return data

    def render(self) -> str:
        out = [x.render() for x in (*self.violations, *self.visibility, *self.headers)]
        out.append(
            f"torchsplit audit: {len(self.violations)} dependency violation(s), "
            f"{len(self.visibility)} visibility leak(s), {len(self.headers)} header "
            f"violation(s); {len(self.pairs)} forbidden pair(s) checked with "
            f"{self.bazel_calls} Bazel call(s) in {self.seconds:.2f}s (policy {self.policy})"
        )
        return "\n\n".join(out) + "\n"


def _union(exprs: list[str]) -> str:
    return " + ".join(f"({e})" for e in exprs)


def _relative(location: str, workspace: Path) -> str:
    prefix = str(workspace.resolve()) + os.sep
    return location[len(prefix) :] if location.startswith(prefix) else location


def _split(label: str) -> tuple[str, str]:
    """(repo, package) of a label as Bazel prints it."""
    repo = ""
    if label.startswith("@"):
        repo, _, label = label[1:].partition("//")
    else:
        label = label.removeprefix("//")
    return repo, label.partition(":")[0]


@dataclass
class _Node:
    label: str
    kind: str
    location: str
    inputs: list[str]
    attributes: dict[str, list[str]]


def _parse_xml(text: str, workspace: Path) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    for element in ET.fromstring(text):
        name = element.get("name", "")
        location = _relative(element.get("location", ""), workspace)
        if element.tag == "rule":
            attributes: dict[str, list[str]] = {}
            for attr in element:
                labels = [x.get("value", "") for x in attr.iter("label")]
                if attr.get("name") and labels:
                    attributes.setdefault(attr.get("name", ""), []).extend(labels)
            inputs = [x.get("name", "") for x in element.findall("rule-input")]
            nodes[name] = _Node(name, element.get("class", ""), location, inputs, attributes)
        elif element.tag in ("source-file", "generated-file"):
            nodes[name] = _Node(name, element.tag, location, [], {})
    return nodes


class Auditor:
    def __init__(
        self, policy: Policy, bazel: Bazel, cquery_flags: list[str], headers: bool = True
    ) -> None:
        self.policy = policy
        self.bazel = bazel
        self.cquery_flags = cquery_flags
        self.headers = headers

    def run(self) -> AuditResult:
        start = time.monotonic()
        calls = self.bazel.calls
        packages = self.bazel.lines("query", "//...", "--output=package")
        pairs = expand(self.policy, packages)
        result = AuditResult(policy=self.policy.path)
        result.pairs = [
            {"rule": p.rule.name, "from": p.source, "to": p.target, "query": self._somepath(p)}
            for p in pairs
        ]
        if pairs:
            self._dependencies(pairs, result)
            self._visibility(pairs, result)
        if self.headers:
            self._headers(pairs, result)
        result.bazel_calls = self.bazel.calls - calls
        result.seconds = time.monotonic() - start
        return result

    @staticmethod
    def _somepath(pair: Pair) -> str:
        return f"somepath({pair.source}, {pair.target})"

    def _cquery(self, expr: str) -> list[str]:
        """cquery analyses like a build: the layering aspect (attached to every build in
        .bazelrc) fails exactly where a violation is, and a visibility error drops the
        target from the configured graph. So keep going, accept the aspect's errors and,
        on a visibility error, ask again with --nocheck_visibility. Any other error is
        Bazel failing."""
        flags = ["--keep_going", *self.cquery_flags]
        proc = self.bazel.run("cquery", expr, *flags, check=False)
        if proc.returncode != 0 and _VISIBILITY_ERROR.search(proc.stderr):
            proc = self.bazel.run("cquery", expr, *flags, "--nocheck_visibility", check=False)
        if proc.returncode != 0:
            other = [
                line
                for line in proc.stderr.splitlines()
                if line.startswith("ERROR") and not _ASPECT_ERROR.search(line)
            ]
            if other:
                raise BazelFailed(
                    f"`bazel cquery {expr}` exited {proc.returncode}:\n{error_lines(proc.stderr)}"
                )
        return [line for line in proc.stdout.splitlines() if line.strip()]

    @staticmethod
    def _configured(pair: Pair) -> str:
        """somepath for cquery, which cannot expand another repository's "//..." pattern:
        that to-set becomes the repository's targets in the from-set's configured closure."""
        target = Pattern.parse(pair.target)
        if not target.repo:
            return f"somepath({pair.source}, {pair.target})"
        prefix = "/".join(target.parts)
        regex = f"^@{target.repo}//{prefix}"
        return f"somepath({pair.source}, filter('{regex}', deps({pair.source})))"

    # -- dependencies (query, cquery) -------------------------------------------------
    def _dependencies(self, pairs: list[Pair], result: AuditResult) -> None:
        found = self.bazel.lines("query", _union([self._somepath(p) for p in pairs]))
        configured = self._cquery(_union([self._configured(p) for p in pairs]))
        if not found and not configured:
            return
        for pair in pairs:
            for violation in self._explain(pair):
                violation.configured = bool(configured) and bool(self._cquery(violation.query))
                result.violations.append(violation)

    def _explain(self, pair: Pair) -> list[Violation]:
        """Each from-target that reaches the to-set without passing another one, with its path."""
        text = self.bazel.run(
            "query", f"allpaths({pair.source}, {pair.target})", "--output=xml"
        ).stdout
        nodes = _parse_xml(text, self.bazel.workspace)
        if not nodes:
            return []
        source = Pattern.parse(pair.source.split(" - ")[0])
        target = Pattern.parse(pair.target)
        bindings = dict(pair.bindings)

        def is_source(label: str) -> bool:
            repo, package = _split(label)
            return source.match(repo, package) is not None and not self.policy.is_exempt(
                repo, package
            )

        def is_target(label: str) -> bool:
            repo, package = _split(label)
            return target.match(repo, package, bindings) is not None

        violations: list[Violation] = []
        for start in sorted(label for label in nodes if is_source(label)):
            path = self._shortest(nodes, start, is_target, is_source)
            if path is None:
                continue  # reaches the to-set only through another from-target
            hops = [Hop(path[0], nodes[path[0]].kind, nodes[path[0]].location)]
            for prev, label in itertools.pairwise(path):
                node = nodes.get(label)
                attrs = [a for a, v in nodes[prev].attributes.items() if label in v]
                hops.append(
                    Hop(
                        label,
                        node.kind if node else "",
                        node.location if node else "",
                        ", ".join(sorted(attrs)),
                    )
                )
            violations.append(
                Violation(
                    rule=pair.rule.name,
                    why=pair.rule.why,
                    source=start,
                    target=path[-1],
                    path=hops,
                    query=f"somepath({start}, {path[-1]})",
                )
            )
        return violations

    @staticmethod
    def _shortest(nodes: dict[str, _Node], start: str, is_target, is_source) -> list[str] | None:  # type: ignore[no-untyped-def]
        """BFS from start to the nearest to-node, not passing through other from-nodes."""
        parent: dict[str, str | None] = {start: None}
        queue = deque([start])
        while queue:
            label = queue.popleft()
            for nxt in nodes[label].inputs if label in nodes else []:
                if nxt in parent or nxt not in nodes:
                    continue
                parent[nxt] = label
                if is_target(nxt):
                    path = [nxt]
                    while parent[path[-1]] is not None:
                        path.append(parent[path[-1]])  # type: ignore[arg-type]
                    return path[::-1]
                if not is_source(nxt):
                    queue.append(nxt)
        return None

    # -- visibility --------------------------------------------------------------------
    def _visibility(self, pairs: list[Pair], result: AuditResult) -> None:
        exprs = [f"visible(//{pkg}:*, {p.target})" for p in pairs for pkg in p.source_packages]
        leaked = self.bazel.lines("query", _union(exprs), "--output=location")
        if not leaked:
            return
        for pair in pairs:
            for pkg in pair.source_packages:
                expr = f"visible(//{pkg}:*, {pair.target})"
                for line in self.bazel.lines("query", expr, "--output=location"):
                    location, _, rest = line.partition(": ")
                    result.visibility.append(
                        VisibilityLeak(
                            pair.rule.name,
                            rest.split()[-1],
                            pkg,
                            _relative(location, self.bazel.workspace),
                        )
                    )

    # -- headers (the coupling scanner) -----------------------------------------------
    def _headers(self, pairs: list[Pair], result: AuditResult) -> None:
        """Includes from a from-side source directory of a file of the to-side: a header
        of a backend (by path, whatever its name), or a CUDA header (the scanner's
        cuda-include) for a toolkit repository."""
        root = self.bazel.workspace
        moved: dict[str, MovedFiles] = {}
        for pair in pairs:
            target = Pattern.parse(pair.target)
            if not target.repo and pair.target not in moved:
                files = iter_files([str(root / "/".join(target.parts))], _HEADER_SUFFIXES)
                moved[pair.target] = MovedFiles.from_sources(
                    os.path.relpath(f, root) for f in files
                )
        seen: set[tuple[str, str, int]] = set()
        for pair in pairs:
            dirs = [str(root / pkg) for pkg in pair.source_packages]
            findings, _ = scan_paths(dirs, base=str(root), moved=moved.get(pair.target), jobs=1)
            for f in findings:
                m = _INCLUDE.search(f.text)
                if f.category not in ("cuda-include", "moved-include") or m is None:
                    continue
                include = m.group(1)
                if self.policy.is_exempt("", str(Path(f.path).parent)):
                    continue
                if pair.target in moved:
                    hit = moved[pair.target].match(include)
                    if hit is None:
                        continue
                    message = f"includes <{include}>, which is {hit} (under {pair.target})"
                elif f.category == "cuda-include" and not any(
                    files.match(include) for files in moved.values()
                ):
                    message = f"includes <{include}>, a header of {pair.target} (CUDA)"
                else:
                    continue
                key = (pair.rule.name, f.path, f.line)
                if key not in seen:
                    seen.add(key)
                    result.headers.append(
                        HeaderFinding(pair.rule.name, f.path, f.line, message, f.text)
                    )
