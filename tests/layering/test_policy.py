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


def starlark_matches() -> list[object]:
    """rules.bzl's match_package over CASES, evaluated by starlark-pyo3."""

    def load(name: str) -> sl.FrozenModule:
        module = sl.Module()
        sl.eval(
            module, sl.parse(name, POLICY.read_text(), sl.Dialect.extended()), sl.Globals.standard()
        )
        return module.freeze()

    module = sl.Module()
    text = RULES.read_text() + "\nRESULTS = [match_package(p, r, k, b) for p, r, k, b in CASES]\n"
    module["CASES"] = [list(c) for c in CASES]
    sl.eval(
        module,
        sl.parse("rules.bzl", text, sl.Dialect.extended()),
        sl.Globals.standard(),
        sl.FileLoader(load),
    )
    return module["RESULTS"]


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


def test_workspace_toolkit_visibility_is_the_policys() -> None:
    policy = load_policy(POLICY)
    tags = read_workspace(REPO / "WORKSPACE").tags
    (toolkit,) = [
        dict(t[3]) for t in tags if t[2] == "local_toolchain" and "toolkit_visibility" in dict(t[3])
    ]
    wanted = tuple("@" + visibility_label(p) for p in policy.toolkit_visibility)
    assert toolkit["toolkit_visibility"] == wanted


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
