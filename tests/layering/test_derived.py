"""Derived backends (DERIVED_BACKENDS): only a translation rule may read the parent's sources.

A scratch workspace loads the real aspect and policy from this checkout
(torch_hip derived from torch_cuda through `hipify_sources` rules) and declares,
in its own third_device/torch_hip, a translation rule that reads a source file
of third_device/torch_cuda (allowed) and every other way to reach torch_cuda
(each must fail analysis with the aspect's message). Its own Bazel server:
about a minute here.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from builds import REPO
from layering.test_aspect import _bazel

pytestmark = pytest.mark.bazel

# A rule whose kind is "hipify_sources", as rules_hip's (the policy names kinds).
TRANSLATOR = """
def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, "")
    return [DefaultInfo(files = depset([out]))]

hipify_sources = rule(
    implementation = _impl,
    attrs = {
        "data": attr.label_list(allow_files = True),
        "srcs": attr.label_list(allow_files = True),
    },
)
"""

PARENT_BUILD = """
cc_library(name = "aten", srcs = ["Kernels.cpp"], visibility = ["//visibility:public"])
genrule(name = "gen", outs = ["Gen.cpp"], cmd = "touch $@", visibility = ["//visibility:public"])
exports_files(["Kernels.cpp", "Other.cpp"], visibility = ["//visibility:public"])
"""

# name -> (attribute and label the derived backend's rule reads, allowed?); the
# rule is a hipify_sources unless the name says otherwise.
CASES = {
    "translate_source": ("srcs", "Other.cpp", True),
    "translate_target": ("srcs", "aten", False),
    "translate_generated": ("srcs", "Gen.cpp", False),
    "translate_other_attr": ("data", "Other.cpp", False),
    "group_source": ("srcs", "Other.cpp", False),
    "library_source": ("srcs", "Kernels.cpp", False),
    "library_target": ("deps", "aten", False),
}
KINDS = {"group": "filegroup", "library": "cc_library", "translate": "hipify_sources"}


def _declaration(name: str) -> str:
    attribute, label, _ = CASES[name]
    kind = KINDS[name.split("_")[0]]
    return f'{kind}(name = "{name}", {attribute} = ["//third_device/torch_cuda:{label}"])'


def test_only_translation_rules_read_the_parents_source_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    parent, derived = ws / "third_device" / "torch_cuda", ws / "third_device" / "torch_hip"
    parent.mkdir(parents=True)
    derived.mkdir(parents=True)
    local = ["rules_cc", "rules_java", "remote_coverage_tools"]
    (ws / "WORKSPACE").write_text(
        f'local_repository(name = "torchsplit", path = "{REPO}")\n'
        + "".join(
            f'local_repository(name = "{n}", path = "{REPO / "tools" / "repos" / n}")\n'
            for n in local
        )
    )
    (ws / "BUILD").write_text("")
    (ws / "translate.bzl").write_text(TRANSLATOR)
    (parent / "BUILD").write_text(PARENT_BUILD)
    for name in ("Kernels.cpp", "Other.cpp"):
        (parent / name).write_text("int f() { return 0; }\n")
    (derived / "BUILD").write_text(
        'load("//:translate.bzl", "hipify_sources")\n\n'
        + "\n".join(map(_declaration, CASES))
        + "\n"
    )
    startup = [f"--output_base={tmp_path / 'out'}"]
    try:
        proc = subprocess.run(
            [_bazel(), *startup, "build", "--nobuild", "--keep_going",
             "--aspects=@torchsplit//tools/layering:check.bzl%layering_check",
             "//third_device/torch_hip:all"],
            cwd=ws, capture_output=True, text=True, timeout=1200, check=False,
        )  # fmt: skip
    finally:
        subprocess.run([_bazel(), *startup, "shutdown"], cwd=ws, capture_output=True, check=False)
    caught = {
        name
        for name in CASES
        if f"//third_device/torch_hip:{name} cannot depend on //third_device/torch_cuda:"
        in proc.stderr
    }
    wanted = {name for name, (_, _, allowed) in CASES.items() if not allowed}
    assert caught == wanted, proc.stderr[-6000:]
    assert "rule backend-to-backend" in proc.stderr
