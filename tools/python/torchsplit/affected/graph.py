"""The build graph as the selection needs it, from ``bazel query``.

``bazel query`` works on the unconfigured graph: an edge inside any ``select()``
branch is an edge, so every configuration CI builds (cuda, cpu-only, ...) is
covered at once, at the cost of selecting a pipeline some configuration would
not need. Soundness over speed.
"""

from __future__ import annotations

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


def label_path(label: str) -> str:
    """//a/b:c/d.py -> a/b/c/d.py (workspace-relative)."""
    package, _, name = label[2:].partition(":")
    return f"{package}/{name}" if package else name


def path_label(package: str, path: str) -> str:
    rel = path[len(package) + 1 :] if package else path
    return f"//{package}:{rel}"


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
