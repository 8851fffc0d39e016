"""The layering aspect follows every label attribute, implicit and tool ones included.

A scratch workspace (its own Bazel server, about a minute here) loads the real
aspect from this checkout and declares, in //core, one target per rule kind and
attribute the old fixed attribute list (deps, data, srcs, hdrs, actual, ...)
missed or that a contributor could plausibly use -- genrule `tools`, cc_binary
`additional_linker_inputs`, a test's `data`, a dependency through an alias --
each reaching a stand-in @local_cuda. Every one must fail analysis with the aspect's message.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from builds import REPO

pytestmark = pytest.mark.bazel

# name -> rule declaration in the scratch workspace's core/BUILD (each reaches @local_cuda).
CASES = {
    "gen_tools": 'genrule(name = "gen_tools", outs = ["a.txt"], cmd = "touch $@", '
    'tools = ["@local_cuda//:nvcc"])',
    "gen_exec_tools": 'genrule(name = "gen_exec_tools", outs = ["b.txt"], cmd = "touch $@", '
    'exec_tools = ["@local_cuda//:nvcc"])',
    "gen_srcs": 'genrule(name = "gen_srcs", srcs = ["@local_cuda//:nvcc"], outs = ["c.txt"], '
    'cmd = "touch $@")',
    "bin_linker_inputs": 'cc_binary(name = "bin_linker_inputs", srcs = ["main.cc"], '
    'additional_linker_inputs = ["@local_cuda//:nvcc"])',
    "lib_deps": 'cc_library(name = "lib_deps", deps = ["@local_cuda//:runtime"])',
    "test_data": 'sh_test(name = "test_data", srcs = ["t.sh"], data = ["@local_cuda//:nvcc"])',
    # An alias is transparent to aspects (they visit its actual): what uses it is caught.
    "via_alias": 'cc_library(name = "via_alias", deps = [":cuda_alias"])\n'
    'alias(name = "cuda_alias", actual = "@local_cuda//:runtime")',
    "group_data": 'filegroup(name = "group_data", data = ["@local_cuda//:nvcc"])',
}

FAKE_CUDA_BUILD = """
filegroup(name = "nvcc", srcs = ["nvcc.sh"], visibility = ["//visibility:public"])
cc_library(name = "runtime", visibility = ["//visibility:public"])
"""


def _bazel() -> str:
    for candidate in ("/usr/bin/bazel-4", "/usr/bin/bazel-4.2.3"):
        if Path(candidate).exists():
            return candidate
    found = shutil.which("bazel-4")
    if not found:
        pytest.fail("Bazel 4.2.3 is not installed: run tools/dev bootstrap")
    return found


def test_aspect_declares_every_attribute() -> None:
    text = (REPO / "tools" / "layering" / "check.bzl").read_text()
    assert 'attr_aspects = ["*"]' in text
    assert "dir(ctx.rule.attr)" in text


def test_no_rule_kind_escapes_the_aspect(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    cuda = tmp_path / "fake_cuda"
    (ws / "core").mkdir(parents=True)
    cuda.mkdir()
    (cuda / "WORKSPACE").write_text('workspace(name = "local_cuda")\n')
    (cuda / "BUILD").write_text(FAKE_CUDA_BUILD)
    (cuda / "nvcc.sh").write_text("#!/bin/sh\n")
    # This checkout's offline stand-ins for the rule sets Bazel would download.
    local = ["rules_cc", "rules_java", "remote_coverage_tools"]
    (ws / "WORKSPACE").write_text(
        f'local_repository(name = "torchsplit", path = "{REPO}")\n'
        f'local_repository(name = "local_cuda", path = "{cuda}")\n'
        + "".join(
            f'local_repository(name = "{n}", path = "{REPO / "tools" / "repos" / n}")\n'
            for n in local
        )
    )
    (ws / "core" / "BUILD").write_text("\n".join(CASES.values()) + "\n")
    (ws / "core" / "main.cc").write_text("int main() { return 0; }\n")
    (ws / "core" / "t.sh").write_text("#!/bin/sh\n")
    startup = [f"--output_base={tmp_path / 'out'}"]
    try:
        proc = subprocess.run(
            [_bazel(), *startup, "build", "--nobuild", "--keep_going",
             "--aspects=@torchsplit//tools/layering:check.bzl%layering_check", "//core:all"],
            cwd=ws, capture_output=True, text=True, timeout=1200, check=False,
        )  # fmt: skip
    finally:
        subprocess.run([_bazel(), *startup, "shutdown"], cwd=ws, capture_output=True, check=False)
    assert proc.returncode != 0, proc.stderr[-3000:]
    escaped = [
        name
        for name in CASES
        if f"//core:{name} cannot depend on @local_cuda//:" not in proc.stderr
    ]
    assert escaped == [], proc.stderr[-6000:]
