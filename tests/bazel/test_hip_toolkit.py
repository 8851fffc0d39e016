"""rules_hip's promises, checked by driving Bazel (the repository's own server).

A missing hipcc or torch wheel is handled like a missing CUDA toolkit: torch_hip
is skipped by wildcards, and naming it says why. torch_hip's translated kernels
depend on torch_cuda's sources, file by file, and its action keys name no
machine path.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from builds import Bazel

pytestmark = pytest.mark.bazel

HIP = "//third_device/torch_hip"


def _repo_file(bazel: Bazel, repo: str, name: str) -> str:
    base = Path(bazel.run("info", "output_base").stdout.strip())
    return (base / "external" / repo / name).read_text()


def test_no_hipcc_skips_torch_hip_and_says_why(bazel: Bazel, tmp_path: Path) -> None:
    env = {"HIP_PATH": str(tmp_path)}  # authoritative, like $CUDA_PATH: no bin/hipcc there
    try:
        bazel.run("build", "--nobuild", "//third_device/...", env=env)
        generated = _repo_file(bazel, "local_hip", "BUILD.bazel")
        named = bazel.run("build", "--nobuild", f"{HIP}:_HIPC", env=env, check=False)
    finally:
        bazel.run("build", "--nobuild", "@local_hip//:hipcc")
    assert f"no HIP toolkit ({tmp_path} has no bin/hipcc" in generated
    assert "apt-get install hipcc libamdhip64-dev rocm-device-libs" in generated
    assert named.returncode != 0
    assert "didn't satisfy constraint @rules_hip//hip:hip_toolkit_not_found" in named.stderr


def test_cpu_only_disables_hip_even_with_a_toolkit(bazel: Bazel) -> None:
    named = bazel.run("build", "--nobuild", "--config=cpu-only", f"{HIP}:_HIPC", check=False)
    assert named.returncode != 0
    assert "hip_disabled_by_flag" in named.stderr


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="no hipcc: torch_hip is not built here")
def test_each_translated_kernel_reads_its_torch_cuda_source(bazel: Bazel) -> None:
    expr = f"mnemonic('Hipify|HipCompile', {HIP}:aten_kernels + {HIP}:aten_kernels_translated)"
    actions = json.loads(bazel.run("aquery", expr, "--output=jsonproto").stdout)["actions"]
    by_mnemonic: dict[str, list[dict]] = {}
    for action in actions:
        by_mnemonic.setdefault(action["mnemonic"], []).append(action)
    hipify, compile_ = by_mnemonic["Hipify"], by_mnemonic["HipCompile"]
    assert len(hipify) == len(compile_) == 3  # Matmul, Pointwise, Reduce
    for action in hipify:
        args = action["arguments"]
        origin = args[args.index("--origin") + 1]
        # One action per file: an edit to that .cu re-runs this translation alone.
        assert re.fullmatch(r"third_device/torch_cuda/csrc/aten/native/\w+Kernels?\.cu", origin)
        assert args[-1].endswith(Path(origin).stem + ".hip")
    for action in compile_:
        args = action["arguments"]
        assert "--offload-arch=gfx90a" in args and "--offload-arch=gfx1030" in args
        env = {e["key"]: e["value"] for e in action["environmentVariables"]}
        assert env == {"HIP_PLATFORM": "amd", "PATH": "/usr/bin:/bin"}
        # Relative paths only: a checkout elsewhere hits the same cache entries.
        assert not [a for a in args if a.startswith("/")], args
