"""``torchsplit audit``: forbidden dependencies of the layering policy, explained hop by hop.

For every (from, to) pair the policy gives (tools/layering/policy.bzl, expanded
over the packages that exist), the audit asks Bazel:

* ``bazel query 'somepath(F, T)'`` (unconfigured: every select() branch);
* ``bazel cquery 'somepath(F, T)'`` (configured: what this build really links);
* ``bazel query 'visible(//pkg:*, T)'`` for every package of F (a target F may
  see is an edge visibility no longer stops);

and, for the header layer, runs the coupling scanner (torchsplit.scan.scanner) over the
source directories of F. Each layer's external repositories and core's device sources
(.cu in srcs) are graph queries too. The clean case costs two Bazel calls: one query
(the union of all of these) and one aquery (the compile and link actions of core and
every backend: their effective flags, and the outputs the artifact check reads); each
violation then gets one ``--output=xml`` query for its path and one cquery.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import xml.etree.ElementTree as ET
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from torchsplit.audit import actions as action_graph
from torchsplit.audit.findings import Finding
from torchsplit.audit.layers import Layers
from torchsplit.audit.policy import Pair, Pattern, Policy, expand
from torchsplit.audit.sources import check_sources
from torchsplit.bazel_run import Bazel, BazelFailed, error_lines
from torchsplit.errors import TorchsplitError
from torchsplit.scan.scanner import MovedFiles, iter_files, scan_paths

# The scanner's include categories: a vendor header, a torch backend header, a moved file.
_INCLUDE_CATEGORIES = ("cuda-include", "backend-include", "moved-include")

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
    known: list[HeaderFinding] = field(default_factory=list)  # policy KNOWN_INCLUDES
    repositories: list[Violation] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    artifacts_read: int = 0
    artifacts_missing: int = 0  # link outputs of the action graph not built yet
    bazel_calls: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (
            self.violations or self.visibility or self.headers or self.repositories or self.findings
        )

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["ok"] = self.ok
        return data

    def render(self) -> str:
        out = [
            x.render()
            for x in (
                *self.violations,
                *self.repositories,
                *self.visibility,
                *self.headers,
                *self.findings,
            )
        ]
        if self.known:
            out.append(
                f"{len(self.known)} known include(s) (policy KNOWN_INCLUDES), not violations:\n"
                + "\n".join(f"  {k.path}:{k.line}: {k.message}" for k in self.known)
            )
        out.append(
            f"torchsplit audit: {len(self.violations)} dependency violation(s), "
            f"{len(self.repositories)} repository violation(s), "
            f"{len(self.visibility)} visibility leak(s), {len(self.headers)} header "
            f"violation(s), {len(self.findings)} graph/source/BUILD/flags/artifact finding(s) "
            f"({self.artifacts_read} artifact(s) of this build read, "
            f"{self.artifacts_missing} not built); {len(self.pairs)} forbidden pair(s) "
            "checked with "
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


def own_header(root: Path, backend: str, path: str, include: str) -> bool:
    """Whether `include` (in `path`, relative to `root`) is a header of `backend` itself.

    Its own headers are never a vendor SDK's, whatever vendor word their names hold
    (a derived torch_musa's "torch_musa/csrc/distributed/Nccl.h", translated at build
    time from torch_cuda's): named by the backend's package ("torch_musa/...",
    "third_device/torch_musa/..."), or relative to the including file and inside
    third_device/<backend>/ ("./x.h", "../x.h", or a "x.h" that is there).
    """
    if include.startswith((f"{backend}/", f"third_device/{backend}/")):
        return True
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), include))
    inside = resolved.startswith(f"third_device/{backend}/")
    return inside and (include.startswith(("./", "../")) or (root / resolved).is_file())


class Auditor:
    def __init__(
        self,
        policy: Policy,
        bazel: Bazel,
        cquery_flags: list[str],
        headers: bool = True,
        sources: bool = True,
        artifacts: bool = True,
        flags: bool = True,
    ) -> None:
        self.policy = policy
        self.bazel = bazel
        self.cquery_flags = cquery_flags
        self.headers = headers
        self.sources = sources
        self.artifacts = artifacts
        self.flags = flags
        # The compile and link actions of the audited configuration (after run()).
        self.actions: list[action_graph.Action] = []
        self.layers: Layers | None = None
        self.packages: list[str] = []

    def run(self) -> AuditResult:
        start = time.monotonic()
        calls = self.bazel.calls
        packages = self.packages = self._packages()
        pairs = expand(self.policy, packages)
        self.layers = Layers.of(self.bazel.workspace, self.policy, packages)
        result = AuditResult(policy=self.policy.path)
        result.pairs = [
            {"rule": p.rule.name, "from": p.source, "to": p.target, "query": self._somepath(p)}
            for p in pairs
        ]
        layers = self._repository_layers(packages)
        device = self._device_sources_expr(packages)
        # The clean case is one query: every part at once, then one aquery. They run in
        # the background (one Bazel server: one after the other) while the file checks
        # below use the CPU.
        parts = [self._somepath(p) for p in pairs] + self._visible_exprs(pairs)
        parts += [expr for _, expr in layers]
        parts += [device] if device else []
        need_actions = self.flags or self.artifacts
        with ThreadPoolExecutor(max_workers=1) as pool:
            union = pool.submit(self.bazel.lines, "query", _union(parts)) if parts else None
            graph = pool.submit(self._actions) if need_actions else None
            self._files(pairs, packages, result)
            found = union.result() if union else []
            self.actions = graph.result() if graph else []
        if self.flags:
            result.findings += action_graph.check_flags(self.actions, self.layers, self.policy)
        if self.artifacts:
            self._artifacts(result)
        if found:
            self._dependencies(pairs, result)
            self._visibility(pairs, result)
            self._repositories(layers, result)
            if device:
                self._device_sources(device, packages, result)
        # Else clean: the configured graph is a subset of the unconfigured one, and
        # every build's aspect checks the configured graph anyway.
        result.bazel_calls = self.bazel.calls - calls
        result.seconds = time.monotonic() - start
        return result

    def _files(self, pairs: list[Pair], packages: list[str], result: AuditResult) -> None:
        """The checks that read source files, not the Bazel graph: includes, sources."""
        if self.headers:
            self._headers(pairs, result)
        if self.sources:
            result.findings += check_sources(self.bazel.workspace, self.policy, packages)

    # -- the action graph (aquery): effective flags, this build's artifacts -------------
    def _actions(self) -> list[action_graph.Action]:
        assert self.layers is not None
        expr = action_graph.expression(self.layers)
        text = self._configured_run("aquery", expr, "--output=jsonproto")
        return action_graph.parse(text)

    def execroot(self) -> Path:
        """Where the action graph's bazel-out/ paths are: the workspace's bazel-out link,
        else `bazel info execution_root` (a build with --symlink_prefix has no link)."""
        root = self.bazel.workspace
        if (root / "bazel-out").exists():
            return root
        lines = self.bazel.lines("info", "execution_root", *self.cquery_flags)
        if not lines:
            raise TorchsplitError("`bazel info execution_root` printed nothing")
        return Path(lines[0])

    def _artifacts(self, result: AuditResult, newer_than: float | None = None) -> None:
        from torchsplit.audit.artifacts import check_artifacts

        assert self.layers is not None
        if not self.actions:
            return  # nothing links: no artifact to read, no execution root to ask for
        outputs = action_graph.link_outputs(self.actions, self.execroot())
        found, result.artifacts_read = check_artifacts(
            outputs, self.layers, self.policy, newer_than=newer_than
        )
        result.artifacts_missing = sum(1 for o in outputs if not o.file.is_file())
        result.findings += found

    def artifact_findings(self, newer_than: float | None = None) -> AuditResult:
        """The artifact check alone, over the actions of the last run() (for the mutation
        harness, which rebuilds between the audit and this check)."""
        result = AuditResult(policy=self.policy.path)
        self._artifacts(result, newer_than)
        return result

    # -- core's device sources (a graph query) -------------------------------------------
    def _core_targets(self, packages: list[str]) -> str:
        mine = [
            p
            for p in packages
            if self.policy.layer_of("", p) == "core" and not self.policy.is_exempt("", p)
        ]
        return " + ".join(f"//{p}:all" for p in mine)

    def _device_sources_expr(self, packages: list[str]) -> str:
        """The device sources (.cu...) named in the srcs/hdrs of core's targets."""
        targets = self._core_targets(packages)
        if not targets or not self.policy.device_suffixes:
            return ""
        alternatives = "|".join(re.escape(s.lstrip(".")) for s in self.policy.device_suffixes)
        named = " + ".join(f"labels({a}, {targets})" for a in ("srcs", "hdrs", "textual_hdrs"))
        return f"filter('\\.({alternatives})$', {named})"

    def _device_sources(self, expr: str, packages: list[str], result: AuditResult) -> None:
        files = self.bazel.lines("query", expr)
        targets = self._core_targets(packages)
        for file in files:
            users = self.bazel.lines("query", f"rdeps({targets}, {file}, 1) - {file}")
            for user in users or ["a core target"]:
                result.findings.append(
                    Finding(
                        "GRAPH",
                        "core-device-source",
                        user,
                        0,
                        f"lists {file}, a device source (DEVICE_SOURCE_SUFFIXES): core compiles "
                        "for the CPU only; see bazel query "
                        f"'rdeps({self._core_targets(packages)}, {file}, 1)'",
                        "core -> a device compiler",
                    )
                )

    def _packages(self) -> list[str]:
        """The main repository's packages, from the file system (as `query //... --output=package`
        lists them, without the Bazel call): directories with a BUILD file, minus .bazelignore's."""
        root = self.bazel.workspace
        ignore_file = root / ".bazelignore"
        ignored = set()
        if ignore_file.exists():
            ignored = {
                line.strip().strip("/")
                for line in ignore_file.read_text().splitlines()
                if line.strip() and not line.startswith("#")
            }
        out = []
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            rel = "" if rel == "." else rel
            dirnames[:] = [
                d
                for d in dirnames
                if not d.startswith((".", "bazel-"))
                and (f"{rel}/{d}" if rel else d) not in ignored
                and not (root / rel / d / "WORKSPACE").exists()
            ]
            if "BUILD.bazel" in filenames or "BUILD" in filenames:
                out.append(rel)
        return sorted(out)

    def _repository_layers(self, packages: list[str]) -> list[tuple[str, str]]:
        """(layer, query of the forbidden repositories its targets and BUILD files reach):
        core, and each backend with its own toolkit (policy REPOSITORIES, TOOLKITS)."""
        groups: dict[str, list[str]] = {}
        for p in packages:
            if self.policy.allowed_repositories(p) is None:
                continue
            backend = self.policy.backend_of(p)
            name = f"backend {backend}" if backend else self.policy.layer_of("", p)
            groups.setdefault(name, []).append(p)
        out = []
        for layer, mine in sorted(groups.items()):
            allowed = self.policy.allowed_repositories(mine[0]) or []
            targets = " + ".join(f"//{p}:all" for p in mine)
            regex = "^@(?!(" + "|".join(re.escape(r) for r in sorted(allowed)) + ")//)"
            out.append((layer, f"filter('{regex}', deps({targets}) + buildfiles({targets}))"))
        return out

    def _repositories(self, layers: list[tuple[str, str]], result: AuditResult) -> None:
        """One violation per (layer, forbidden repository), with one path into it."""
        for layer, expr in layers:
            by_repo: dict[str, list[str]] = {}
            for label in self.bazel.lines("query", expr):
                by_repo.setdefault(label[1:].split("//", 1)[0], []).append(label)
            source_expr = expr.split("deps(", 1)[1].split(") + buildfiles(", 1)[0]
            for repo, labels in sorted(by_repo.items()):
                targets = [x for x in labels if not x.endswith(".bzl")]
                path: list[str] = []
                if targets:
                    query = f"somepath({source_expr}, filter('^@{re.escape(repo)}//', "
                    query += f"deps({source_expr})))"
                    path = self.bazel.lines("query", query)
                else:
                    query = f"rdeps(buildfiles({source_expr}), {labels[0]}, 1)"
                result.repositories.append(
                    Violation(
                        rule="repositories",
                        why=f"@{repo} is not among the repositories {layer} may reach "
                        "(REPOSITORIES and TOOLKITS in tools/layering/policy.bzl)",
                        source=path[0] if path else f"a {layer} BUILD file (it loads {labels[0]})",
                        target=path[-1] if path else labels[0],
                        path=[Hop(x, "", "") for x in path] or [Hop(labels[0], "", "")],
                        query=f"somepath({path[0]}, {path[-1]})" if path else query,
                    )
                )

    @staticmethod
    def _somepath(pair: Pair) -> str:
        return f"somepath({pair.source}, {pair.reach or pair.target})"

    def _configured_run(self, command: str, expr: str, *extra: str) -> str:
        """cquery and aquery analyse like a build: the layering aspect (attached to every
        build in .bazelrc) fails exactly where a violation is, and a visibility error drops
        the target from the configured graph. So keep going, accept the aspect's errors
        and, on a visibility error, ask again with --nocheck_visibility. Any other error is
        Bazel failing."""
        flags = ["--keep_going", *self.cquery_flags, *extra]
        proc = self.bazel.run(command, expr, *flags, check=False)
        if proc.returncode != 0 and _VISIBILITY_ERROR.search(proc.stderr):
            proc = self.bazel.run(command, expr, *flags, "--nocheck_visibility", check=False)
        if proc.returncode != 0:
            other = [
                line
                for line in proc.stderr.splitlines()
                if line.startswith("ERROR") and not _ASPECT_ERROR.search(line)
            ]
            if other:
                raise BazelFailed(
                    f"`bazel {command} {expr}` exited {proc.returncode}:\n"
                    f"{error_lines(proc.stderr)}"
                )
        return proc.stdout

    def _cquery(self, expr: str) -> list[str]:
        return [line for line in self._configured_run("cquery", expr).splitlines() if line.strip()]

    @staticmethod
    def _configured(pair: Pair) -> str:
        """somepath for cquery, which cannot expand another repository's "//..." pattern:
        that to-set becomes the repository's targets in the from-set's configured closure."""
        target = Pattern.parse(pair.target)
        if not target.repo:
            return f"somepath({pair.source}, {pair.reach or pair.target})"
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
            "query", f"allpaths({pair.source}, {pair.reach or pair.target})", "--output=xml"
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
    @staticmethod
    def _visible(pkg: str, target: str) -> str:
        """What a from-package can see of the to-set; a config_setting (a select() key,
        public by design) is not an edge anyone can use, so it is no leak."""
        return f"visible(//{pkg}:*, {target}) - kind(config_setting, {target})"

    def _visible_exprs(self, pairs: list[Pair]) -> list[str]:
        return [self._visible(pkg, p.target) for p in pairs for pkg in p.source_packages]

    def _visibility(self, pairs: list[Pair], result: AuditResult) -> None:
        leaked = self.bazel.lines("query", _union(self._visible_exprs(pairs)), "--output=location")
        if not leaked:
            return
        for pair in pairs:
            for pkg in pair.source_packages:
                expr = self._visible(pkg, pair.target)
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
        scanned: dict[tuple[str, ...], list] = {}  # type: ignore[type-arg]
        for pair in pairs:
            dirs = [str(root / pkg) for pkg in pair.source_packages]
            if pair.target in moved or tuple(dirs) not in scanned:
                findings, _ = scan_paths(dirs, base=str(root), moved=moved.get(pair.target), jobs=1)
                scanned.setdefault(tuple(dirs), findings)
            else:
                # A toolkit pair needs only the CUDA includes, which any scan of
                # these directories already found: do not scan them twice.
                findings = scanned[tuple(dirs)]
            for f in findings:
                m = _INCLUDE.search(f.text)
                if f.category not in _INCLUDE_CATEGORIES or m is None:
                    continue
                include = m.group(1)
                if self.policy.is_exempt("", str(Path(f.path).parent)):
                    continue
                if pair.target in moved:
                    hit = moved[pair.target].match(include)
                    if hit is None:
                        continue
                    message = f"includes <{include}>, which is {hit} (under {pair.target})"
                elif f.category != "moved-include" and not any(
                    files.match(include) for files in moved.values()
                ):
                    message = f"includes <{include}>, a header of {pair.target} (CUDA)"
                else:
                    continue
                key = (pair.rule.name, f.path, f.line)
                if key not in seen:
                    seen.add(key)
                    why = self.policy.known_includes.get((f.path, include))
                    if why:
                        message += f"; known: {why}"
                    finding = HeaderFinding(pair.rule.name, f.path, f.line, message, f.text)
                    (result.known if why else result.headers).append(finding)
        self._vendor_headers(scanned, result)

    def _vendor_headers(self, scanned: dict, result: AuditResult) -> None:  # type: ignore[type-arg]
        """A backend including a vendor SDK header of a toolkit that is not its own
        (torch_emu including <cuda_runtime.h>): the scanner's cuda-include, per family."""
        root = self.bazel.workspace
        packages = self.packages
        for backend in sorted({b for p in packages if (b := self.policy.backend_of(p))}):
            mine = tuple(str(root / p) for p in packages if self.policy.backend_of(p) == backend)
            if mine not in scanned:
                scanned[mine], _ = scan_paths(list(mine), base=str(root), jobs=1)
            own = self.policy.vendors_of("backend", backend)
            for f in scanned[mine]:
                if f.category != "cuda-include" or set(f.families) & set(own):
                    continue
                m = _INCLUDE.search(f.text)
                if m is not None and own_header(root, backend, f.path, m.group(1)):
                    continue
                family = "/".join(f.families)
                result.headers.append(
                    HeaderFinding(
                        "TOOLKITS",
                        f.path,
                        f.line,
                        f"{backend} -> {family} toolkit (not its own): includes "
                        f"<{m.group(1) if m else f.text}>, a {family} SDK header",
                        f.text,
                    )
                )
