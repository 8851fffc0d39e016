"""The policy file read three ways (aspect's Starlark, Python, WORKSPACE) must agree."""

from __future__ import annotations

import pytest
import starlark as sl

from bazel.bazel_files import read_module, read_workspace
from builds import REPO
from torchsplit import vendors
from torchsplit.audit.actions import core_link_library
from torchsplit.audit.policy import Derived, Pattern, expand, load_policy, visibility_label

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
    """WORKSPACE and MODULE.bazel make each toolkit repository visible to the backends whose
    TOOLKITS entry names it, and to nothing else (layer 1 enforces TOOLKITS too)."""
    policy = load_policy(POLICY)
    for declared in (read_workspace(REPO / "WORKSPACE"), read_module(REPO / "MODULE.bazel")):
        attrs = [dict(t[3]) for t in declared.tags]
        # By repository name: `tags` is a set, whose order follows the hash seed.
        toolkits = {a["name"]: a["toolkit_visibility"] for a in attrs if "toolkit_visibility" in a}
        (wheels,) = [a["wheel_visibility"] for a in attrs if "wheel_visibility" in a]
        assert toolkits == {
            "local_cuda": tuple(policy.toolkit_visibility("local_cuda")),
            "local_hip": tuple(policy.toolkit_visibility("local_hip")),
        }
        assert wheels == tuple(policy.toolkit_visibility("cuda_wheels"))
    assert policy.toolkit_visibility("local_cuda") == ["@//third_device/torch_cuda:__subpackages__"]
    assert policy.toolkit_visibility("local_hip") == ["@//third_device/torch_hip:__subpackages__"]


def _rules(policy_text: str | None = None):  # type: ignore[no-untyped-def]
    """A function evaluating an expression over rules.bzl (with policy.bzl, or `policy_text`
    in its place) in starlark-pyo3, as the aspect would."""

    def load(name: str) -> sl.FrozenModule:
        module = sl.Module()
        text = policy_text if policy_text is not None else POLICY.read_text()
        sl.eval(module, sl.parse(name, text, sl.Dialect.extended()), sl.Globals.standard())
        return module.freeze()

    def call(expr: str) -> object:
        module = sl.Module()
        text = RULES.read_text() + f"\nRESULT = {expr}\n"
        sl.eval(module, sl.parse("rules.bzl", text, sl.Dialect.extended()),
                sl.Globals.standard(), sl.FileLoader(load))  # fmt: skip
        return module["RESULT"]

    return call


def test_rules_bzl_and_python_agree_on_the_positive_policy() -> None:
    """The aspect's helpers (rules.bzl) and the audit's (policy.py, actions.py) give the same
    answers: repositories per layer and backend, toolkit visibility, core's -l flags."""
    policy = load_policy(POLICY)
    rules = _rules()
    for package in ("core", "core/sub", "third_device/torch_cuda", "third_device/torch_emu",
                    "third_device/acme/x", "tests", "tools/layering"):  # fmt: skip
        assert rules(f'allowed_repositories("", "{package}")') == (
            policy.allowed_repositories(package)
        ), package
    assert "local_cuda" in policy.allowed_repositories("third_device/torch_cuda")
    assert "local_cuda" not in policy.allowed_repositories("third_device/torch_emu")
    for repo in ("local_cuda", "cuda_wheels", "rules_cuda", "pybind11"):
        assert rules(f'toolkit_visibility("{repo}")') == policy.toolkit_visibility(repo)
    flags = ["-lm", "-lstdc++", "-ltorch_core", "-lcudart", "-l:libnvToolsExt.so.1"]
    flags += ["-Wl,-soname,libtorch_core.so", "-Wl,--push-state,-lnvrtc", "-pthread"]
    for flag in flags:
        assert rules(f'core_may_link("{flag}")') == core_link_library(flag, policy), flag
    assert core_link_library("-lnvToolsExt", policy) == "libnvToolsExt.so"


def test_a_derived_backend_reads_its_parents_sources_only_through_translation() -> None:
    rules = _rules()
    assert load_policy(POLICY).derived == {"torch_hip": ("torch_cuda", ("hipify_sources",))}
    # Only the derived backend may name the parent's exported source files.
    assert rules('derived_readers("torch_cuda")') == ["//third_device/torch_hip:__pkg__"]
    assert rules('derived_readers("torch_emu")') == []
    hip, cuda = '"", "third_device/torch_hip"', '"", "third_device/torch_cuda"'
    assert rules(f'is_translation_read({hip}, "hipify_sources", {cuda}, True)') is True
    # Not through another rule kind, not a target or generated file, not another backend.
    assert rules(f'is_translation_read({hip}, "cc_library", {cuda}, True)') is False
    assert rules(f'is_translation_read({hip}, "hipify_sources", {cuda}, False)') is False
    emu = '"", "third_device/torch_emu"'
    assert rules(f'is_translation_read({hip}, "hipify_sources", {emu}, True)') is False
    # The audit's somepath() leaves out only the parent's source files the translation reads.
    policy = load_policy(POLICY)
    policy.derived = {"torch_hip": Derived("torch_cuda", ("hipify_sources",))}
    packages = ["core", "third_device/torch_cuda", "third_device/torch_hip"]
    reach = {(p.source, p.target): p.reach for p in expand(policy, packages)}
    derived = reach[("//third_device/torch_hip/...", "//third_device/torch_cuda/...")]
    assert derived.startswith("//third_device/torch_cuda/...:* - (")
    assert "kind('^(hipify_sources) rule$', //third_device/torch_hip/...:*)" in derived
    assert reach[("//third_device/torch_cuda/...", "//third_device/torch_hip/...")] == (
        "//third_device/torch_hip/...:*"
    )


def test_device_suffixes_cover_the_vendor_vocabulary() -> None:
    """Every device-source suffix torchsplit.vendors knows is refused in core."""
    policy = load_policy(POLICY)
    for suffixes in vendors.MOVE_SUFFIXES.values():
        assert set(suffixes) <= set(policy.device_suffixes)


def test_toolkits_name_known_vendors_and_existing_backends() -> None:
    policy = load_policy(POLICY)
    for backend, toolkit in policy.toolkits.items():
        assert (REPO / "third_device" / backend).is_dir(), backend
        assert set(toolkit.vendors) <= set(vendors.FAMILIES), backend
    for backend, derived in policy.derived.items():
        assert (REPO / "third_device" / derived.parent).is_dir(), backend


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
