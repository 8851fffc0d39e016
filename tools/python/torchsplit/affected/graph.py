"""The build graph as the selection needs it, from ``bazel query``.

``bazel query`` works on the unconfigured graph: an edge inside any ``select()``
branch is an edge, so every configuration CI builds (cuda, cpu-only, ...) is
covered at once, at the cost of selecting a pipeline some configuration would
not need. Soundness over speed.
"""

from __future__ import annotations

import posixpath
from typing import Protocol

from torchsplit.bazel_run import Bazel


class Graph(Protocol):
    def packages(self) -> set[str]: ...
    def known_files(self) -> set[str]: ...
    def tests(self) -> set[str]: ...
    def packages_loading(self, files: list[str]) -> set[str]: ...
    def tests_reaching(self, tests: list[str], labels: list[str]) -> set[str]: ...
    def path(self, test: str, labels: list[str]) -> list[str]: ...
    def test_sources(self, test: str) -> list[str]: ...
    def rules(self) -> dict[str, str]: ...


def label_path(label: str) -> str:
    """//a/b:c/d.py -> a/b/c/d.py (workspace-relative)."""
    package, _, name = label[2:].partition(":")
    return f"{package}/{name}" if package else name


def path_label(package: str, path: str) -> str:
    rel = path[len(package) + 1 :] if package else path
    return f"//{package}:{rel}"


def parse_build_output(text: str, workspace: str) -> dict[str, str]:
    """``query --output=build`` -> {label: rule text}, without what moves when a line
    moves (location comments, generator_location), so equal text means an equal rule."""
    rules: dict[str, str] = {}
    package = name = None
    body: list[str] = []
    prefix = workspace.rstrip("/") + "/"
    for line in text.splitlines():
        if line.startswith("# ") and package is None and ":" in line and not body:
            where = line[2:].rsplit(":", 2)[0]
            if where.startswith(prefix):
                package = posixpath.dirname(where[len(prefix) :])
            continue
        if not line.strip() or line.startswith("#") or "generator_location =" in line:
            continue
        body.append(line)
        stripped = line.strip()
        if stripped.startswith("name = ") and name is None:
            name = stripped[len("name = ") :].strip('",')
        if line == ")":
            if package is not None and name is not None:
                rules[f"//{package}:{name}"] = "\n".join(body)
            package = name = None
            body = []
    return rules


def _set(labels: list[str]) -> str:
    return "set(" + " ".join(sorted(labels)) + ")"


class BazelGraph:
    """One workspace's graph; each query runs once (results are kept)."""

    def __init__(self, bazel: Bazel) -> None:
        self.bazel = bazel
        self._cache: dict[tuple[str, ...], list[str]] = {}

    def _query(self, *args: str) -> list[str]:
        if args not in self._cache:
            self._cache[args] = self.bazel.lines("query", "--noshow_progress", *args)
        return self._cache[args]

    def packages(self) -> set[str]:
        return {label[2:].partition(":")[0] for label in self._all() if label.startswith("//")}

    def _all(self) -> list[str]:
        return self._query("//...:* + buildfiles(//...)")

    def known_files(self) -> set[str]:
        files = self._query('kind("source file", //...:*) + buildfiles(//...)')
        return {label_path(label) for label in files if label.startswith("//")}

    def tests(self) -> set[str]:
        return set(self._query('kind(".*_test rule", //...)'))

    def packages_loading(self, files: list[str]) -> set[str]:
        """Packages whose BUILD file loads one of ``files`` (.bzl), directly or not."""
        out = self._query(
            "--universe_scope=//...",
            "--order_output=no",
            f"rbuildfiles({', '.join(sorted(files))})",
        )
        return {label[2:].partition(":")[0] for label in out if label.startswith("//")}

    def tests_reaching(self, tests: list[str], labels: list[str]) -> set[str]:
        if not tests or not labels:
            return set()
        expr = f"let t = {_set(tests)} in rdeps($t, {_set(labels)}) intersect $t"
        return set(self._query(expr))

    def path(self, test: str, labels: list[str]) -> list[str]:
        """One dependency path from ``test`` down to one of ``labels`` (test first)."""
        return self._query(f"somepath({test}, {_set(labels)})")

    def test_sources(self, test: str) -> list[str]:
        return [
            label_path(label)
            for label in self._query(f"labels(srcs, {test})")
            if label.startswith("//")
            and label.rpartition("/")[2].rpartition(":")[2].startswith("test_")
        ]

    def rules(self) -> dict[str, str]:
        """Every rule of the workspace as instantiated (macros expanded, select() kept)."""
        if ("rules",) not in self._cache:
            out = self.bazel.run("query", "--noshow_progress", "--output=build", "//...").stdout
            self._cache[("rules",)] = [out]
        return parse_build_output(self._cache[("rules",)][0], str(self.bazel.workspace))
