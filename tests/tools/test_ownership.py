"""Every test file is owned by a Bazel test target, so `bazel test //...` runs it.

`tools/dev test` runs `bazel test //...` only: a tests/**/test_*.py that no target lists
in its srcs would never run. tests/upstream is the one exception (it needs the fetched
PyTorch tree; tools/dev upstream runs it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from builds import REPO, Bazel

pytestmark = pytest.mark.bazel

# Run by tools/dev upstream against the fetched tree, not by `bazel test`.
OUTSIDE_BAZEL = ("tests/upstream/",)


def files_to_own(root: Path) -> set[str]:
    """The test files of a checkout: tests/**/test_*.py and bench/**/test_*.py."""
    found = {
        p.relative_to(root).as_posix()
        for top in ("tests", "bench")
        for p in (root / top).rglob("test_*.py")
        if "fixtures" not in p.relative_to(root).parts
    }
    return {f for f in found if not f.startswith(OUTSIDE_BAZEL)}


def owned_files(bazel: Bazel) -> set[str]:
    """The source files of every test target, from `bazel query` (//pkg:path -> pkg/path)."""
    proc = bazel.run("query", "labels(srcs, tests(//...))", "--output=label")
    owned = set()
    for label in proc.stdout.split():
        package, _, name = label.removeprefix("//").partition(":")
        owned.add(f"{package}/{name}" if package else name)
    return owned


def unowned(root: Path, owned: set[str]) -> list[str]:
    return sorted(files_to_own(root) - owned)


@pytest.fixture(scope="module")
def owned() -> set[str]:
    return owned_files(Bazel(REPO))


def test_every_test_file_is_owned_by_a_target(owned: set[str]) -> None:
    missing = unowned(REPO, owned)
    assert missing == [], (
        f"test files no Bazel target runs (add a line to tests/BUILD.bazel, see "
        f"tests/suites.bzl): {', '.join(missing)}"
    )


def test_a_file_without_a_target_is_reported(owned: set[str]) -> None:
    stray = REPO / "tests" / "tools" / "test_nobody_owns_this.py"
    stray.write_text("def test_x() -> None:\n    pass\n", encoding="utf-8")
    try:
        assert unowned(REPO, owned) == ["tests/tools/test_nobody_owns_this.py"]
    finally:
        stray.unlink()


def test_every_package_is_in_the_workspace_copy() -> None:
    """A package's files reach //:workspace through its :all_files (a new package needs its
    line in the root BUILD.bazel), or the workspace tests would neither see nor rerun on it."""
    bazel = Bazel(REPO)
    packages = set(bazel.run("query", "//...", "--output=package").stdout.split())
    included = bazel.run("query", "deps(//:all_files)", "--output=label").stdout.split()
    covered = {label.removeprefix("//").partition(":")[0] for label in included}
    assert sorted(packages - covered) == []
