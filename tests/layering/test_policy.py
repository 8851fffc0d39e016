"""The policy file read three ways (aspect's Starlark, Python, WORKSPACE) must agree."""

from __future__ import annotations

import pytest
import starlark as sl

from bazel.bazel_files import read_workspace
from builds import REPO
from torchsplit.audit.policy import Pattern, expand, load_policy, visibility_label

POLICY = REPO / "tools" / "layering" / "policy.bzl"
RULES = REPO / "tools" / "layering" / "rules.bzl"

CASES = [
    ("//core/...", "", "core", {}),
    ("//core/...", "", "core/probe", {}),
    ("//core/...", "", "corex", {}),
    ("//core/...", "local_cuda", "core", {}),
    ("@local_cuda//...", "local_cuda", "", {}),
    ("@local_cuda//...", "local_cuda", "include", {}),
    ("//third_device/...", "", "third_device/torch_cuda", {}),
    ("//third_device/{backend}/...", "", "third_device/torch_cuda/sub", {}),
    ("//third_device/{backend}/...", "", "third_device", {}),
    ("//third_device/{other}/...", "", "third_device/torch_cuda", {"backend": "torch_cuda"}),
    ("//third_device/{other}/...", "", "third_device/torch_emu", {"backend": "torch_cuda"}),
    ("//third_device/{backend}/...", "", "third_device/torch_emu", {"backend": "torch_cuda"}),
    ("//tests", "", "tests", {}),
    ("//tests", "", "tests/x", {}),
]


def starlark_eval(expression: str, **inputs: object) -> object:
    """`expression` evaluated after rules.bzl (which loads policy.bzl), by starlark-pyo3."""

    def load(name: str) -> sl.FrozenModule:
        module = sl.Module()
        sl.eval(
            module, sl.parse(name, POLICY.read_text(), sl.Dialect.extended()), sl.Globals.standard()
        )
        return module.freeze()

    module = sl.Module()
    for name, value in inputs.items():
        module[name] = value
    text = RULES.read_text() + f"\nRESULT = {expression}\n"
    sl.eval(
        module,
        sl.parse("rules.bzl", text, sl.Dialect.extended()),
        sl.Globals.standard(),
        sl.FileLoader(load),
    )
    return module["RESULT"]


def starlark_matches() -> list[object]:
    """rules.bzl's match_package over CASES."""
    return starlark_eval(  # type: ignore[return-value]
        "[match_package(p, r, k, b) for p, r, k, b in CASES]", CASES=[list(c) for c in CASES]
    )


def test_python_matcher_agrees_with_the_aspects() -> None:
    python = [Pattern.parse(p).match(r, k, b) for p, r, k, b in CASES]
    assert python == starlark_matches()
    assert python[9] is None and python[10] == {"backend": "torch_cuda", "other": "torch_emu"}


def test_a_new_backend_needs_no_policy_edit() -> None:
    policy = load_policy(POLICY)
    packages = ["core", "tests", "tools/layering", "third_device/acme"]
    packages += ["third_device/torch_cuda", "third_device/torch_emu"]
    pairs = {(p.rule.name, p.source, p.target) for p in expand(policy, packages)}
    assert ("core-to-backend", "//core/...", "//third_device/...") in pairs
    assert ("core-to-toolkit", "//core/...", "@local_cuda//...") in pairs
    backend_pairs = {(s, t) for name, s, t in pairs if name == "backend-to-backend"}
    assert len(backend_pairs) == 6  # 3 backends, each forbidden the other two
    assert ("//third_device/acme/...", "//third_device/torch_cuda/...") in backend_pairs


def test_derived_backends_read_the_same_from_starlark_and_python() -> None:
    """torch_hip may read torch_cuda's source files through hipify_sources rules only."""
    policy = load_policy(POLICY)
    assert policy.derived == {"torch_hip": ("torch_cuda", ("hipify_sources",))}
    assert starlark_eval('derived_readers("torch_cuda")') == ["//third_device/torch_hip:__pkg__"]
    assert starlark_eval('derived_readers("torch_emu")') == []
    parents = starlark_eval(
        "[derived_parent(r, p, k) for r, p, k in CASES]",
        CASES=[
            ["", "third_device/torch_hip", "hipify_sources"],
            ["", "third_device/torch_hip", "cc_library"],
            ["", "third_device/torch_hip/sub", "hipify_sources"],
            ["", "third_device/torch_emu", "hipify_sources"],
            ["other", "third_device/torch_hip", "hipify_sources"],
        ],
    )
    assert parents == ["third_device/torch_cuda", None, None, None, None]


def test_workspace_toolkit_visibility_is_the_policys() -> None:
    policy = load_policy(POLICY)
    tags = read_workspace(REPO / "WORKSPACE").tags
    toolkits = [
        dict(t[3]) for t in tags if t[2] == "local_toolchain" and "toolkit_visibility" in dict(t[3])
    ]
    wanted = tuple("@" + visibility_label(p) for p in policy.toolkit_visibility)
    assert {t["name"] for t in toolkits} == {"local_cuda", "local_hip"}
    assert all(t["toolkit_visibility"] == wanted for t in toolkits), toolkits


@pytest.mark.parametrize(
    ("pattern", "label"),
    [
        ("//tests/...", "//tests:__subpackages__"),
        ("@local_cuda//...", "@local_cuda//:__subpackages__"),
        ("//core", "//core:__pkg__"),
    ],
)
def test_visibility_labels(pattern: str, label: str) -> None:
    assert visibility_label(pattern) == label
