"""torchsplit affected: git changes, the pipeline policy and the selection rules.

The mapping runs on a scratch git repository with a small in-memory graph; the last
tests run it on this repository's real Bazel graph.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.affected.changes import Change, audit_lines_changed, changed_files
from torchsplit.affected.graph import BazelGraph, parse_build_output
from torchsplit.affected.pipelines import DEFAULT_PIPELINES, discover_backends, load_pipelines
from torchsplit.affected.select import Selector
from torchsplit.audit.policy import load_policy
from torchsplit.bazel_run import Bazel
from torchsplit.checkout import git
from torchsplit.cli import main
from torchsplit.errors import TorchsplitError

POLICY = REPO / DEFAULT_PIPELINES

# A miniature of this repository's graph: file -> rules -> tests.
EDGES = {
    "//tests:core_test": ["//core:torch_core", "//third_device/torch_emu:torch_emu"],
    "//tests:jit_test": ["//core:torch_core"],
    "//tests:torch_emu_test": ["//third_device/torch_emu:torch_emu"],
    "//tests:torch_cuda_test": ["//third_device/torch_cuda:torch_cuda"],
    "//third_device/torch_emu:torch_emu": ["//third_device/torch_emu:Emu.cpp", "//core:torch_core"],
    "//third_device/torch_cuda:torch_cuda": [
        "//third_device/torch_cuda:Kernels.cu",
        "//core:torch_core",
    ],
    "//core:torch_core": ["//core:Tensor.cpp"],
}
FILES = {
    "core/BUILD.bazel": "",
    "core/Tensor.cpp": '#include "Tensor.h"\nint x;\n',
    "third_device/torch_emu/BUILD.bazel": "",
    "third_device/torch_emu/Emu.cpp": "int emu;\n",
    "third_device/torch_cuda/BUILD.bazel": "",
    "third_device/torch_cuda/Kernels.cu": "int cuda;\n",
    "tests/BUILD.bazel": "",
    "tests/core/test_x.py": "def test_x(): pass\n",
    "tools/python/torchsplit/cli.py": "x = 1\n",
    "docs/build.md": "# build\n",
    "build_variables.bzl": "SRCS = []\n",
    ".bazelrc": "build --nosandbox_debug\n",
}


class FakeGraph:
    """The Graph protocol over EDGES; ``rules_text`` stands for query --output=build."""

    def __init__(self, rules_text: dict[str, str] | None = None) -> None:
        self.rules_text = rules_text or {}
        self.queries: list[str] = []

    def packages(self) -> set[str]:
        return {"core", "tests", "third_device/torch_emu", "third_device/torch_cuda", ""}

    def known_files(self) -> set[str]:
        files = {t[2:].replace(":", "/") for deps in EDGES.values() for t in deps if "." in t}
        return files | {p for p in FILES if p.endswith(("BUILD.bazel", ".bzl"))}

    def tests(self) -> set[str]:
        return {t for t in EDGES if t.endswith("_test")}

    def _deps(self, label: str) -> list[str]:
        return EDGES.get(label, [])

    def _reaches(self, start: str, targets: set[str]) -> list[str] | None:
        package_wide = {t[:-2] for t in targets if t.endswith(":*")}
        if start in targets or start.partition(":")[0] in package_wide:
            return [start]
        for dep in self._deps(start):
            sub = self._reaches(dep, targets)
            if sub:
                return [start, *sub]
        return None

    def packages_loading(self, files: list[str]) -> set[str]:
        return {"core", "third_device/torch_emu", "third_device/torch_cuda", "tests"}

    def tests_reaching(self, tests: list[str], labels: list[str]) -> set[str]:
        self.queries.append(" ".join(labels))
        return {t for t in tests if self._reaches(t, set(labels))}

    def path(self, test: str, labels: list[str]) -> list[str]:
        return self._reaches(test, set(labels)) or []

    def test_sources(self, test: str) -> list[str]:
        return ["tests/core/test_x.py"] if test == "//tests:core_test" else []

    def rules(self) -> dict[str, str]:
        return self.rules_text


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def commit(repo: Path, edits: dict[str, str | None], message: str = "change") -> str:
    for rel, text in edits.items():
        if text is None:
            git(repo, "rm", "-q", rel)
        else:
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def select(repo: Path, graph: FakeGraph | None = None, base: str = "HEAD~1", head: str = "HEAD"):
    policy = load_pipelines(POLICY, discover_backends(repo))
    selector = Selector(policy, graph or FakeGraph(), repo, (graph or FakeGraph()).rules)
    return selector.select(
        base, head, changed_files(repo, base, head), audit_lines_changed(repo, base, head)
    )


def test_changes_include_renames_deletions_and_untracked(repo: Path) -> None:
    git(repo, "mv", "docs/build.md", "docs/building.md")
    git(repo, "rm", "-q", "third_device/torch_cuda/Kernels.cu")
    (repo / "core/Tensor.cpp").write_text("int y;\n")
    (repo / "core/New.cpp").write_text("int z;\n")
    changes = changed_files(repo, "HEAD", None)
    assert Change("R", "docs/building.md", "docs/build.md") in changes
    assert Change("D", "third_device/torch_cuda/Kernels.cu") in changes
    assert Change("M", "core/Tensor.cpp") in changes
    assert Change("A", "core/New.cpp") in changes


def test_audit_lines_are_includes_and_imports(repo: Path) -> None:
    commit(
        repo,
        {
            "core/Tensor.cpp": '#include "Other.h"\nint x;\n',
            "third_device/torch_emu/Emu.cpp": "int emu2;\n",
        },
    )
    assert audit_lines_changed(repo, "HEAD~1", "HEAD") == {"core/Tensor.cpp"}


def test_backends_are_discovered_and_stamped(repo: Path) -> None:
    (repo / "third_device/torch_acme").mkdir()
    (repo / "third_device/torch_acme/BUILD.bazel").write_text("")
    assert discover_backends(repo) == ["torch_acme", "torch_cuda", "torch_emu"]
    policy = load_pipelines(POLICY, discover_backends(repo))
    acme = policy.by_name("torch_acme")
    assert acme.tests == ("//tests:torch_acme_*", "//third_device/torch_acme:*")
    assert acme.pytest == ("tests/torch_acme",)
    assert [p.name for p in policy.pipelines] == [
        "core",
        "torch_acme",
        "torch_cuda",
        "torch_emu",
        "tools",
        "docs-only",
    ]


def test_core_change_selects_every_backend(repo: Path) -> None:
    commit(repo, {"core/Tensor.cpp": '#include "Tensor.h"\nint x = 1;\n'})
    sel = select(repo)
    assert sel.names == ["core", "torch_cuda", "torch_emu"]
    assert not sel.everything
    cuda = next(p for p in sel.pipelines if p.name == "torch_cuda")
    assert cuda.why == (
        "core/Tensor.cpp -> //core:torch_core -> //third_device/torch_cuda:torch_cuda"
        " -> //tests:torch_cuda_test"
    )
    core = next(p for p in sel.pipelines if p.name == "core")
    # Only the test targets the fixture's graph has ("*" entries expand to them).
    assert core.tests == ["//tests:conformance_test", "//tests:core_test", "//tests:jit_test"]
    assert "tests/core" in core.pytest


def test_backend_change_selects_only_that_backend(repo: Path) -> None:
    commit(repo, {"third_device/torch_cuda/Kernels.cu": "int cuda = 2;\n"})
    sel = select(repo)
    assert sel.names == ["torch_cuda"]
    assert sel.pipelines[0].why.startswith("third_device/torch_cuda/Kernels.cu -> ")
    assert sel.pipelines[0].affected_tests == ["//tests:torch_cuda_test"]
    assert sel.skipped == ["core", "torch_emu", "tools", "docs-only"]


def test_docs_change_selects_docs_only(repo: Path) -> None:
    commit(repo, {"docs/build.md": "# build, again\n"})
    sel = select(repo)
    assert sel.names == ["docs-only"]
    assert sel.pipelines[0].why == "docs/build.md is under docs/ (docs-only's paths)"


def test_tools_change_selects_tools(repo: Path) -> None:
    commit(repo, {"tools/python/torchsplit/cli.py": "x = 2\n"})
    assert select(repo).names == ["tools"]


@pytest.mark.parametrize(
    "path", [".bazelrc", "tools/cuda/requirements_lock_13.txt", "tools/layering/pipelines.bzl"]
)
def test_soundness_fallbacks_select_everything(repo: Path, path: str) -> None:
    commit(repo, {path: "changed\n"})
    sel = select(repo)
    assert sel.names == ["core", "torch_cuda", "torch_emu", "tools", "docs-only"]
    assert sel.everything[0].startswith(f"{path} changed (EVERYTHING: ")
    assert all(p.why.startswith("everything: ") for p in sel.pipelines)


def test_file_bazel_does_not_know_selects_everything(repo: Path) -> None:
    commit(repo, {"mystery.cfg": "x\n"})
    sel = select(repo)
    assert sel.everything == ["mystery.cfg: Bazel does not know it and no pipeline claims it"]
    assert len(sel.names) == 5


def test_deleted_file_stands_for_its_package(repo: Path) -> None:
    commit(repo, {"third_device/torch_emu/Emu.cpp": None})
    graph = FakeGraph()
    head_files = graph.known_files() - {"third_device/torch_emu/Emu.cpp"}
    graph.known_files = lambda: head_files  # type: ignore[method-assign]
    sel = select(repo, graph)
    assert sel.names == ["core", "torch_emu"]
    emu = next(p for p in sel.pipelines if p.name == "torch_emu")
    assert "deleted from //third_device/torch_emu" in emu.why


def test_build_change_selects_only_rules_that_differ(repo: Path) -> None:
    base_rules = {"//third_device/torch_cuda:torch_cuda": "old", "//core:torch_core": "same"}
    head_rules = {"//third_device/torch_cuda:torch_cuda": "new", "//core:torch_core": "same"}
    commit(repo, {"build_variables.bzl": "SRCS = ['Kernels.cu']\n"})
    policy = load_pipelines(POLICY, discover_backends(repo))
    sel = Selector(policy, FakeGraph(head_rules), repo, lambda: base_rules).select(
        "HEAD~1", "HEAD", changed_files(repo, "HEAD~1", "HEAD")
    )
    assert sel.names == ["torch_cuda", "tools"]
    assert sel.pipelines[0].why.startswith(
        "build_variables.bzl (changes //third_device/torch_cuda:torch_cuda) -> "
    )
    assert "layering audit" in sel.pipelines[1].why


def test_build_change_without_base_graph_takes_the_package(repo: Path) -> None:
    commit(repo, {"third_device/torch_emu/BUILD.bazel": "# edited\n"})
    policy = load_pipelines(POLICY, discover_backends(repo))
    sel = Selector(policy, FakeGraph(), repo, None).select(
        "HEAD~1", "HEAD", changed_files(repo, "HEAD~1", "HEAD")
    )
    assert sel.names == ["core", "torch_emu", "tools"]


def test_parse_build_output_ignores_locations() -> None:
    text = (
        '# /ws/core/BUILD.bazel:3:11\ncc_library(\n  name = "a",\n'
        '  generator_location = "core/BUILD.bazel:3:11",\n  srcs = ["//core:a.cc"],\n)\n'
        "# Rule a instantiated at (most recent call last):\n#   /ws/core/BUILD.bazel:3:11 in x\n\n"
        '# /ws/BUILD.bazel:1:1\nalias(\n  name = "b",\n)\n'
    )
    moved = text.replace(":3:11", ":9:11")
    rules = parse_build_output(text, "/ws")
    assert set(rules) == {"//core:a", "//:b"}
    assert rules == parse_build_output(moved, "/ws")


def test_bad_policy_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "pipelines.bzl"
    bad.write_text("PIPELINES = 3\nEVERYTHING = []\nSHARED = []\nGRAPH_PIPELINE = None\n")
    with pytest.raises(TorchsplitError, match="PIPELINES must be a list"):
        load_pipelines(bad, [])


def test_cli_bad_revision_exits_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["affected", "--repo", str(repo), "no-such-rev"]) == 2
    assert "torchsplit: error: no such revision: no-such-rev" in capsys.readouterr().err


# --- the real graph --------------------------------------------------------------


@pytest.mark.bazel
def test_real_graph_maps_core_and_backend_files() -> None:
    bazel_cmd = [str(REPO / "node_modules" / ".bin" / "bazelisk")]
    if not Path(bazel_cmd[0]).exists():
        bazel_cmd = [str(REPO / "tools" / "bazel")]
    graph = BazelGraph(Bazel(REPO, bazel_cmd))
    policy = load_pipelines(POLICY, discover_backends(REPO))
    selector = Selector(policy, graph, REPO, None)

    # Every backend builds on core's op math (the backends found, not a list).
    backends = sorted(discover_backends(REPO))
    core = selector.select("x", "y", [Change("M", "core/aten/native/ElementwiseMath.h")])
    # The tests that run Bazel on a copy of the workspace declare every file as data
    # (//:workspace), so every change reaches them: tools and docs-only come along.
    along = ["tools", "docs-only"]
    assert core.names == ["core", *backends, *along]
    assert {"torch_cuda", "torch_emu", "torch_hip"} <= set(core.names)
    cuda = next(p for p in core.pipelines if p.name == "torch_cuda")
    # The why-line is a real dependency path, found by bazel query somepath.
    assert cuda.why.startswith("core/aten/native/ElementwiseMath.h -> //core:")
    # To one of torch_cuda's test targets (its :conformance_test or //tests:torch_cuda_test).
    assert " -> //third_device/torch_cuda:" in cuda.why
    assert cuda.why.rsplit(" -> ", 1)[1] in cuda.tests
    assert {"//tests:core_test", "//tests:jit_test", "//tests:conformance_test"} <= set(
        core.pipelines[0].affected_tests
    )
    tools = next(p for p in core.pipelines if p.name == "tools")
    assert "//tests:bazel/test_foundation" in tools.affected_tests

    emu = selector.select(
        "x", "y", [Change("M", "third_device/torch_emu/csrc/aten/EmuKernels.cpp")]
    )
    # core's own suite runs on the emulated device too (core_test and jit_test depend on it).
    assert emu.names == ["core", "torch_emu", *along]
    assert "//tests:core_test" in emu.pipelines[0].affected_tests
    assert "//tests:torch_cuda_test" not in emu.pipelines[0].affected_tests
    assert {"//tests:torch_emu_test", "//third_device/torch_emu:conformance_test"} <= set(
        emu.pipelines[1].affected_tests
    )
    assert "tests/torch_emu" in emu.pipelines[1].pytest

    cuda_only = selector.select(
        "x", "y", [Change("M", "third_device/torch_cuda/csrc/aten/native/PointwiseKernels.cu")]
    )
    # torch_cuda's kernel, and the backends derived from torch_cuda (torch_hip
    # translates that very file: DERIVED_BACKENDS), nothing else.
    derived = load_policy(REPO / "tools/layering/policy.bzl").derived
    children = [d for d, (parent, _) in derived.items() if parent == "torch_cuda" and d in backends]
    assert cuda_only.names == sorted(["torch_cuda", *children]) + along


@pytest.mark.bazel
def test_cli_json_on_a_real_commit() -> None:
    """A docs-only commit of this repository, through the CLI (HEAD's tree exported)."""
    proc = subprocess.run(
        [str(REPO / "tools" / "torchsplit"), "affected", "--json", "766a8bd~1", "766a8bd"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if "no such revision" in proc.stderr:
        pytest.skip("history not available in this clone")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [p["name"] for p in out["pipelines"]] == ["docs-only"]
    assert out["tests"] == []
