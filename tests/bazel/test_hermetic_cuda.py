"""With no CUDA toolkit on the machine, torch_cuda still builds: from the hermetic one.

In a private mount namespace (`unshare -m`) an empty directory covers every
/usr/local/cuda* and /dev/null every nvcc on PATH (tests/bazel/hide_cuda.py);
a Bazel server of its own (TEST_TMPDIR: a fresh output root) then runs
`tools/dev build` and aquery. The CUDA compiles must name nvcc and headers only
under the hermetic repository, by exec-root-relative paths.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from bazel.hide_cuda import run_hidden, unshare_works
from builds import REPO, Bazel, bazel_command

pytestmark = pytest.mark.bazel

LOCK = REPO / "tools" / "cuda" / "requirements_lock.txt"
CU_FILES = sorted(p.name for p in (REPO / "third_device" / "torch_cuda").rglob("*.cu"))


def _hermetic_dir() -> Path:
    cache = os.environ.get("TORCHSPLIT_CUDA_CACHE") or str(Path.home() / ".cache/torchsplit/cuda")
    return Path(cache) / hashlib.sha256(LOCK.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    reason = unshare_works()
    if reason:
        pytest.skip(reason)
    if not (_hermetic_dir() / ".torchsplit-installed").exists():
        pytest.fail(
            f"the hermetic toolkit is not installed in {_hermetic_dir()}: tools/dev bootstrap"
        )
    out = tmp_path_factory.mktemp("hidden")
    bazel = bazel_command()
    query = "mnemonic(CudaCompile, //third_device/torch_cuda:all)"
    commands = [
        # --symlink_prefix=/: leave the worktree's bazel-bin pointing at its own build.
        [str(REPO / "tools" / "dev"), "build", "--symlink_prefix=/"],
        [*bazel, "aquery", query, "--output=text"],
        [*bazel, "info", "output_base"],
        [*bazel, "shutdown"],
    ]
    env = dict(os.environ)
    env["TEST_TMPDIR"] = str(out / "root")  # a server (and output root) of its own
    ran = run_hidden(commands, out, env=env, cwd=REPO)
    result = {}
    for name, r in zip(["build", "aquery", "output_base"], ran[:3], strict=True):
        assert r.returncode == 0, f"{name} exited {r.returncode}:\n{r.stderr[-4000:]}"
        result[name] = r.stdout
        result[name + "_err"] = r.stderr
    return result


def test_torch_cuda_builds_from_the_hermetic_toolkit(hidden: dict[str, str]) -> None:
    assert "Build completed successfully" in hidden["build_err"]
    base = Path(hidden["output_base"].strip())
    generated = (base / "external" / "local_cuda" / "BUILD.bazel").read_text()
    assert "hermetic CUDA 13.0.88" in generated
    so = base / "execroot/torchsplit/bazel-out/k8-fastbuild/bin/third_device/torch_cuda"
    assert b".nv_fatbin" in (so / "torch_cuda" / "_CUDAC.so").read_bytes()


def test_cuda_compiles_name_only_the_hermetic_repository(hidden: dict[str, str]) -> None:
    aquery = hidden["aquery"]
    commands = [line for line in aquery.splitlines() if "Command Line:" in line]
    assert len(commands) == len(CU_FILES) >= 3, aquery[:2000]
    assert all("(exec external/local_cuda/bin/nvcc " in c for c in commands), commands
    for cu in CU_FILES:
        assert cu in aquery
    # No host path of any toolkit: neither the machine's nor the install directory.
    assert "/usr/local/cuda" not in aquery
    assert str(_hermetic_dir()) not in aquery
    assert ".cache/torchsplit" not in aquery
    # Every include directory that names the toolkit is the hermetic repository's.
    flags = [f for f in aquery.replace("'", " ").split() if f.startswith(("-I", "-isystem="))]
    toolkit = [f for f in flags if "cuda" in f.split("third_device/torch_cuda")[0]]
    assert toolkit and all("external/local_cuda" in f for f in toolkit), toolkit
    # The toolkit's files are declared inputs, so their digests are in the action key.
    for part in ["bin/nvcc", "bin/ptxas", "nvvm/bin/cicc", "include/cuda_runtime.h"]:
        assert f"external/local_cuda/{part}" in aquery


def _repo_file(bazel: Bazel, repo: str, name: str) -> str:
    base = Path(bazel.run("info", "output_base").stdout.strip())
    return (base / "external" / repo / name).read_text()


def test_locks_pick_the_toolkit_and_its_nvrtc_and_nccl(bazel: Bazel) -> None:
    targets = ["@local_cuda//:nvcc", "@cuda_wheels//:nvrtc_headers"]
    try:
        bazel.run("build", "--nobuild", "--config=cuda13_5", *targets)
        assert 'TOOLKIT_VERSION = "13.5.37"' in _repo_file(bazel, "local_cuda", "defs.bzl")
        wheels = _repo_file(bazel, "cuda_wheels", "defs.bzl")
        assert 'NVRTC_VERSION = "13.5.37"' in wheels and 'NCCL_VERSION = "2.32.3"' in wheels
    finally:
        bazel.run("build", "--nobuild", *targets)
    assert 'TOOLKIT_VERSION = "13.0.88"' in _repo_file(bazel, "local_cuda", "defs.bzl")
    wheels = _repo_file(bazel, "cuda_wheels", "defs.bzl")
    assert 'NVRTC_VERSION = "13.0.88"' in wheels and 'NCCL_VERSION = "2.28.9"' in wheels
    base = Path(bazel.run("info", "output_base").stdout.strip())
    nvrtc = (base / "external/cuda_wheels/nvrtc/include/nvrtc.h").resolve()
    assert nvrtc.is_relative_to(_hermetic_dir())


def test_a_lock_not_installed_skips_cuda_and_says_how_to_install(
    bazel: Bazel, tmp_path: Path
) -> None:
    env = {"TORCHSPLIT_CUDA_CACHE": str(tmp_path)}
    try:
        bazel.run("build", "--nobuild", "//...", env=env)
        generated = _repo_file(bazel, "local_cuda", "BUILD.bazel")
        named = bazel.run(
            "build", "--nobuild", "//third_device/torch_cuda:aten", env=env, check=False
        )
    finally:
        bazel.run("build", "--nobuild", "@local_cuda//:nvcc")
    assert "no CUDA toolkit (hermetic CUDA 13.0.88" in generated
    assert "is not installed in" in generated and "run tools/dev bootstrap" in generated
    assert named.returncode != 0
    assert "cuda_toolkit_not_found" in named.stderr


def test_an_unknown_version_is_refused(bazel: Bazel) -> None:
    proc = bazel.run(
        "build",
        "--nobuild",
        "--repo_env=HERMETIC_CUDA_VERSION=12.9",
        "@local_cuda//:nvcc",
        check=False,
    )
    bazel.run("build", "--nobuild", "@local_cuda//:nvcc")
    assert proc.returncode != 0
    assert (
        "HERMETIC_CUDA_VERSION=12.9 is not pinned: choose one of 13.0.88, 13.5.37, or system"
        in (proc.stderr)
    )
