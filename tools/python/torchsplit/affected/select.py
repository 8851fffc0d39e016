"""Changed files -> pipelines, each with its tests and one line of why.

Order of the rules, for each changed path (old and new path of a rename):
1. EVERYTHING in the policy (flags, toolchain, lock files, the policy itself):
   every pipeline, nothing more to decide.
2. The build graph: a source file, BUILD file or .bzl file Bazel knows maps to
   labels; their reverse dependencies among the pipelines' test targets select
   those pipelines. BUILD/.bzl changes also select GRAPH_PIPELINE (the audit).
   A deleted file stands for every target of the package that held it.
3. Paths: a pipeline whose ``paths`` hold the file is selected; SHARED paths
   (core) also select every backend pipeline.
4. A file neither Bazel nor any pipeline knows: everything.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.affected.changes import Change
from torchsplit.affected.graph import Graph, label_path, path_label
from torchsplit.affected.pipelines import PipelinePolicy
from torchsplit.bazel_run import BazelFailed

BUILD_NAMES = ("BUILD", "BUILD.bazel")


@dataclass
class Chosen:
    name: str
    tests: list[str]
    pytest: list[str]
    why: str
    affected_tests: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "tests": self.tests,
            "pytest": self.pytest,
            "why": self.why,
            "affected_tests": self.affected_tests,
        }


@dataclass
class Selection:
    base: str
    head: str
    changes: list[Change]
    everything: list[str]
    pipelines: list[Chosen]
    skipped: list[str]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.pipelines]

    def as_dict(self) -> dict[str, object]:
        return {
            "base": self.base,
            "head": self.head,
            "changes": [
                {"status": c.status, "path": c.path, **({"old": c.old} if c.old else {})}
                for c in self.changes
            ],
            "everything": self.everything,
            "pipelines": [p.as_dict() for p in self.pipelines],
            "skipped": self.skipped,
            "tests": sorted({t for p in self.pipelines for t in p.tests}),
            "pytest": sorted({t for p in self.pipelines for t in p.pytest}),
        }


def _package_of(path: str, packages: set[str]) -> str | None:
    """The innermost package holding ``path`` (a Bazel package ends at a BUILD file)."""
    directory = posixpath.dirname(path)
    while True:
        if directory in packages:
            return directory
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def _render_path(path: list[str], changed: dict[str, str]) -> str:
    """test, ..., label -> "changed file -> label -> ... -> test"."""
    hops = list(reversed(path))
    end = hops[0]
    if end in changed:
        source = changed[end]
        if label_path(end) == source:
            hops = hops[1:]
    else:
        package = end[2:].partition(":")[0]
        source = changed.get(f"//{package}:*", label_path(end))
    return " -> ".join([source, *hops])


class Selector:
    def __init__(
        self,
        policy: PipelinePolicy,
        graph: Graph,
        tree: Path | None = None,
        base_rules: Callable[[], dict[str, str]] | None = None,
    ) -> None:
        """``tree``: HEAD's files; ``base_rules``: BASE's rules (Graph.rules), fetched
        only when a BUILD or .bzl file changed."""
        self.policy = policy
        self.graph = graph
        self.tree = tree
        self.base_rules = base_rules

    def select(
        self, base: str, head: str, changes: list[Change], audit_inputs: set[str] | None = None
    ) -> Selection:
        reasons: dict[str, str] = {}  # pipeline -> first why
        everything: list[str] = []
        audit_inputs = audit_inputs or set()

        def note(name: str, why: str) -> None:
            reasons.setdefault(name, why)

        paths = sorted({p for c in changes for p in c.paths})
        present = {c.path for c in changes if not c.deleted}
        for path in paths:
            hit = self.policy.everything_match(path)
            if hit:
                everything.append(f"{path} changed (EVERYTHING: {hit!r})")

        labels: dict[str, str] = {}  # label -> the changed file it stands for
        affected: set[str] = set()
        graph_failed = None
        if not everything:
            try:
                labels, unknown = self._labels(paths, present)
                tests = sorted(
                    {t for p in self.policy.pipelines for t in self._tests(p.tests)}
                    & self.graph.tests()
                )
                affected = self.graph.tests_reaching(tests, list(labels))
            except BazelFailed as exc:
                graph_failed = str(exc).splitlines()[-1]
                everything.append(f"bazel query failed, so the graph cannot tell: {graph_failed}")
                unknown = set()

        if not everything:
            for pipeline in self.policy.pipelines:
                mine = sorted(affected & set(self._tests(pipeline.tests)))
                if mine:
                    note(pipeline.name, self._why(mine, labels))
            for path in paths:
                claimed = False
                for pipeline in self.policy.pipelines:
                    hit = pipeline.claims(path)
                    if hit:
                        claimed = True
                        note(pipeline.name, f"{path} is under {hit} ({pipeline.name}'s paths)")
                shared = self.policy.shared_match(path)
                if shared:
                    for pipeline in self.policy.pipelines:
                        if pipeline.backend:
                            note(pipeline.name, f"{path} is under {shared}: backends build on it")
                graph_input = posixpath.basename(path) in BUILD_NAMES or path.endswith(".bzl")
                if self.policy.graph_pipeline and (graph_input or path in audit_inputs):
                    what = "the build graph" if graph_input else "an include/import line"
                    note(
                        self.policy.graph_pipeline,
                        f"{path} changes {what} the layering audit reads",
                    )
                if path in unknown and not claimed:
                    everything.append(f"{path}: Bazel does not know it and no pipeline claims it")

        if everything:
            reasons = {p.name: "everything: " + everything[0] for p in self.policy.pipelines}

        chosen = [
            Chosen(
                p.name,
                self._tests(p.tests),
                self._pytest_paths(p.tests, p.pytest, graph_failed is None),
                reasons[p.name],
                sorted(affected & set(self._tests(p.tests))),
            )
            for p in self.policy.pipelines
            if p.name in reasons
        ]
        skipped = [p.name for p in self.policy.pipelines if p.name not in reasons]
        return Selection(base, head, changes, everything, chosen, skipped)

    def _tests(self, tests: tuple[str, ...]) -> list[str]:
        """A pipeline's test targets: an entry ending in "*" stands for every test target
        whose label starts with what precedes it (one target per test file: //tests:tools/*)."""
        out: list[str] = []
        for test in tests:
            if not test.endswith("*"):
                out.append(test)
                continue
            try:
                known = self.graph.tests()
            except BazelFailed:
                continue
            out += sorted(t for t in known if t.startswith(test[:-1]))
        return out

    def _labels(self, paths: list[str], present: set[str]) -> tuple[dict[str, str], set[str]]:
        """Labels standing for the changed paths, and the paths Bazel does not know."""
        known = self.graph.known_files()
        packages = self.graph.packages()
        labels: dict[str, str] = {}
        unknown: set[str] = set()
        build_files = [
            p
            for p in paths
            if posixpath.basename(p) in BUILD_NAMES and posixpath.dirname(p) in packages
        ]
        bzl = [p for p in paths if p.endswith(".bzl") and p in known]
        # A .bzl defining a rule or aspect changes what its rules do, not how they are
        # instantiated: every target of every package loading it.
        behaviour = [p for p in bzl if self._defines_rules(p)]
        if behaviour:
            for package in self.graph.packages_loading(behaviour):
                labels.setdefault(
                    f"//{package}:*", f"{' '.join(behaviour)} (loaded by //{package})"
                )
        declarative = build_files + [p for p in bzl if p not in behaviour]
        if declarative:
            labels.update(self._changed_rules(declarative, packages))
        for path in paths:
            if path in build_files or path in bzl:
                continue
            package = _package_of(path, packages)
            if path in known and package is not None:
                labels[path_label(package, path)] = path
            elif path not in present and package is not None:
                # Deleted (or renamed away): every target of its package may have used it.
                labels.setdefault(f"//{package}:*", f"{path} (deleted from //{package})")
            else:
                unknown.add(path)
        return labels, unknown

    def _defines_rules(self, path: str) -> bool:
        if self.tree is None:
            return True
        try:
            text = (self.tree / path).read_text(encoding="utf-8")
        except OSError:
            return True
        return any(word in text for word in ("rule(", "aspect(", "transition("))

    def _changed_rules(self, files: list[str], packages: set[str]) -> dict[str, str]:
        """BUILD files and macro/data .bzl files: the rules whose instantiation differs
        from BASE's (bazel-diff's idea, on query --output=build); without BASE's
        graph, every target of the packages involved."""
        head = self.graph.rules() if self.base_rules is not None else None
        base = None
        if head is not None and self.base_rules is not None:
            try:
                base = self.base_rules()
            except BazelFailed:
                base = None
        out: dict[str, str] = {}
        if head is None or base is None:
            bzl = [p for p in files if p.endswith(".bzl")]
            loading = self.graph.packages_loading(bzl) if bzl else set()
            for path in files:
                if not path.endswith(".bzl"):
                    out.setdefault(f"//{posixpath.dirname(path)}:*", path)
            for package in loading:
                out.setdefault(f"//{package}:*", f"{' '.join(bzl)} (loaded by //{package})")
            return out
        for label, text in sorted(head.items()):
            if base.get(label) == text:
                continue
            package = label[2:].partition(":")[0]
            own = [p for p in files if posixpath.dirname(p) == package and not p.endswith(".bzl")]
            source = " ".join(own or files)
            out[label] = f"{source} (changes {label})"
        return out

    def _why(self, tests: list[str], labels: dict[str, str]) -> str:
        best: list[str] | None = None
        for test in tests:
            path = self.graph.path(test, list(labels))
            if path and (best is None or len(path) < len(best)):
                best = path
        if not best:
            return f"{', '.join(tests)} depends on a changed file"
        return _render_path(best, labels)

    def _pytest_paths(
        self, tests: tuple[str, ...], dirs: tuple[str, ...], graph_ok: bool
    ) -> list[str]:
        out = list(dirs)
        if graph_ok:
            existing = self.graph.tests()
            for test in tests:
                if test in existing:
                    for source in self.graph.test_sources(test):
                        if not any(source.startswith(d.rstrip("/") + "/") for d in out):
                            out.append(source)
        return out
