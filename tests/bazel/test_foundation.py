"""The Bazel foundation's promises, checked by driving Bazel itself.

These share the repository's Bazel server with `tools/dev test`'s build, so a
warm run takes seconds; runs that need another environment (no toolkit) make
Bazel re-detect the toolkit and switch back afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from builds import REPO, Bazel
from torchsplit.checkout import copy_checkout

pytestmark = pytest.mark.bazel


@pytest.fixture(scope="module")
def no_toolkit_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """CUDA_PATH at an empty directory and no nvcc on PATH: no toolkit visible."""
    empty = tmp_path_factory.mktemp("no_cuda_toolkit")
    path = os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "nvcc").exists()
    )
    return {"CUDA_PATH": str(empty), "PATH": path}


def output_base(bazel: Bazel) -> Path:
    return Path(bazel.run("info", "output_base").stdout.strip())


def test_core_builds_cpu_only_with_no_toolkit_visible(
    bazel: Bazel, no_toolkit_env: dict[str, str]
) -> None:
    # Core never even loads the toolkit repository, so this holds whatever it holds.
    bazel.run("build", "--config=cpu-only", "//core/...", env=no_toolkit_env)
    aquery = bazel.run(
        "aquery", "--config=cpu-only", "deps(//core/...)", "--output=text", env=no_toolkit_env
    ).stdout
    assert "Mnemonic: CppCompile" in aquery  # the query really listed core's actions
    assert "CudaCompile" not in aquery
    assert "nvcc" not in aquery
    assert re.search("cuda", aquery, re.IGNORECASE) is None


def test_wildcard_skips_cuda_targets_and_a_named_one_says_why(
    bazel: Bazel, no_toolkit_env: dict[str, str]
) -> None:
    bazel.run("build", "//...", env=no_toolkit_env)
    generated = (output_base(bazel) / "external" / "local_cuda" / "BUILD.bazel").read_text()
    assert "no CUDA toolkit ($CUDA_PATH=" in generated
    named = bazel.run("build", "//third_device/torch_cuda:aten", env=no_toolkit_env, check=False)
    assert named.returncode != 0
    assert "cuda_toolkit_not_found" in named.stderr


def test_cpu_only_config_disables_cuda_even_with_a_toolkit(bazel: Bazel) -> None:
    bazel.run("build", "--config=cpu-only", "//...")
    named = bazel.run("build", "--config=cpu-only", "//third_device/torch_cuda:_CUDAC", check=False)
    assert named.returncode != 0
    assert "cuda_disabled_by_flag" in named.stderr


def test_core_dependency_closure_names_no_cuda_label(bazel: Bazel) -> None:
    labels = bazel.run("query", "deps(//core/...)", "--output=label").stdout.splitlines()
    assert "//core:torch_cpu" in labels
    assert [label for label in labels if "cuda" in label.lower()] == []


def test_cuda_backend_builds_nvcc_kernels_for_sm_90(bazel: Bazel) -> None:
    aquery = bazel.run(
        "aquery", "mnemonic(CudaCompile, //third_device/torch_cuda:all)", "--output=text"
    ).stdout
    assert "PointwiseKernels.cu" in aquery
    assert "arch=compute_90,code=sm_90" in aquery


def test_core_cannot_see_backends_or_the_toolkit(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    copy_checkout(REPO, checkout)
    probe = checkout / "core" / "probe"
    probe.mkdir()
    (probe / "BUILD.bazel").write_text(
        'cc_library(name = "to_backend", deps = ["//third_device/torch_cuda:aten"])\n'
        'cc_library(name = "to_toolkit", deps = ["@local_cuda//:headers"])\n'
    )
    isolated = Bazel(checkout, startup=[f"--output_base={tmp_path / 'output_base'}"])
    try:
        result = isolated.run("build", "--nobuild", "--keep_going", "//core/probe:all", check=False)
    finally:
        isolated.run("shutdown", check=False)
    assert result.returncode != 0
    assert (
        "target '//third_device/torch_cuda:aten' is not visible from target "
        "'//core/probe:to_backend'"
    ) in result.stderr
    assert (
        "target '@local_cuda//:headers' is not visible from target '//core/probe:to_toolkit'"
        in (result.stderr)
    )


def _install_base(command: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(
        [*command, "info", "install_base"],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return proc.stdout.strip()


def test_bazelisk_resolves_debians_bazel_offline_with_an_empty_cache(tmp_path: Path) -> None:
    bazelisk = REPO / "node_modules" / ".bin" / "bazelisk"
    assert _install_base([str(bazelisk)], {"BAZELISK_HOME": str(tmp_path)}) == "/usr/share/bazel"
    # Nothing was downloaded into the fresh bazelisk cache.
    assert not list(tmp_path.rglob("bazel-*"))


def test_debian_launcher_runs_tools_bazel() -> None:
    # /usr/bin/bazel maps .bazelversion (4.2.3) to a missing /usr/bin/bazel-4.2.3
    # and hands over to tools/bazel, which falls back to /usr/bin/bazel-4.
    assert _install_base(["/usr/bin/bazel"], {}) == "/usr/share/bazel"
    assert _install_base([str(REPO / "tools" / "bazel")], {"BAZEL_REAL": "/nonexistent"}) == (
        "/usr/share/bazel"
    )


def test_pytest_macro_writes_junit_and_honours_test_filter(bazel: Bazel) -> None:
    bazel.run("test", "//tests:core_test", "--test_filter=test_parse_and_print")
    testlogs = Path(bazel.run("info", "bazel-testlogs").stdout.strip())
    xml = (testlogs / "tests" / "core_test" / "test.xml").read_text()
    assert re.findall(r'<testcase [^>]*name="([^"]+)"', xml) == ["test_parse_and_print"]


def test_lint_is_clean() -> None:
    proc = subprocess.run(
        [str(REPO / "tools" / "dev"), "lint"], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
