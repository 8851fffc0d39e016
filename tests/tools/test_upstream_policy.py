"""The restructured tree's layering policy: valid for the audit, naming the judged couplings,
and the audit's KNOWN_INCLUDES entries checked for shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsplit.audit.actions import Action, check_flags
from torchsplit.audit.layers import Layers
from torchsplit.audit.policy import load_policy
from torchsplit.audit.sources import check_sources
from torchsplit.errors import TorchsplitError
from torchsplit.upstream import overlay


def test_the_tree_policy_loads_and_names_the_judged_couplings(tmp_path: Path) -> None:
    path = tmp_path / "policy.bzl"
    path.write_text(overlay.policy("2.6.0"))
    policy = load_policy(path)
    assert policy.layer_of("", "c10/core") == "core"
    assert policy.layer_of("", "third_device/torch_cuda") == "backend"
    assert "local_cuda" not in policy.repositories["core"]
    assert "fmt" in policy.repositories["backend"]
    # The CUDA toolkit is torch_cuda's own (TOOLKITS), not every backend's.
    assert "local_cuda" not in policy.repositories["backend"]
    toolkit = policy.toolkit("torch_cuda")
    assert {"local_cuda", "cuda_host_12_6", "cuda_host_13_0"} <= set(toolkit.repositories)
    # c10/cuda spells HIP/ROCm headers and variables: torch_cuda's toolkit names both vendors.
    assert policy.vendors_of("backend", "torch_cuda") == ("cuda", "rocm")
    assert policy.is_exempt("", "c10/test") and policy.is_exempt("", "c10/test/util")
    assert not policy.is_exempt("", "c10/core")
    assert len(policy.known_includes) == 10
    assert "__CUDACC__" in policy.known_includes[("c10/util/Half.h", "cuda_fp16.h")]
    assert policy.dynamic_loaders == ["c10/util/WaitCounter.cpp"]
    assert "libfmt.so" in policy.core_needed
    # An unknown version has no judged couplings: everything is reported.
    path.write_text(overlay.policy("9.9.9"))
    assert load_policy(path).known_includes == {}


def test_a_known_include_without_a_reason_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "policy.bzl"
    text = overlay.policy("9.9.9").replace(
        "KNOWN_INCLUDES = [\n", 'KNOWN_INCLUDES = [\n    {"file": "a.h", "include": "cuda.h"},\n'
    )
    path.write_text(text)
    with pytest.raises(TorchsplitError, match="needs file, include and why"):
        load_policy(path)


def test_c10_test_is_exempt_inside_core_and_c10_core_is_not(tmp_path: Path) -> None:
    """//c10/test/... sits under core's //c10/...: its files, actions and artifacts are not
    core's (PyTorch's tests name devices as data); the same coupling in c10/core is reported."""
    path = tmp_path / "tools/layering/policy.bzl"
    path.parent.mkdir(parents=True)
    path.write_text(overlay.policy("2.6.0"))
    policy = load_policy(path)
    coupled = 'const char* v() { return getenv("CUDA_VISIBLE_DEVICES"); }\n'
    files = {
        "c10/BUILD.bazel": "",
        "c10/core/BUILD.bazel": "",
        "c10/core/Probe.cpp": coupled,
        "c10/test/BUILD.bazel": "",
        "c10/test/core/Device_test.cpp": coupled,
        "third_device/torch_cuda/BUILD.bazel": "",
        "third_device/torch_cuda/csrc/framework/cuda/Alloc.cpp": "#include <hip/hip_runtime.h>\n"
        'const char* e = getenv("PYTORCH_NO_HIP_MEMORY_CACHING");\n',
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    packages = ["c10", "c10/core", "c10/test", "third_device/torch_cuda"]
    layers = Layers.of(tmp_path, policy, packages)
    assert layers.core_roots == ("c10",)
    assert layers.layer("c10/test/core/Device_test.cpp") is None
    assert layers.layer("c10/test/BUILD") is None
    core = layers.layer("c10/core/Probe.cpp")
    assert core is not None and core.kind == "core"
    found = [f.render() for f in check_sources(tmp_path, policy, packages)]
    assert found == [
        "SOURCE [core-to-toolkit] c10/core/Probe.cpp:1: core -> cuda toolkit: string "
        "'CUDA_VISIBLE_DEVICES' (in a getenv() call) is a cuda environment variable"
    ]
    flags = [
        Action("CppCompile", "//c10/test:core_tests", ("gcc", "-DUSE_CUDA=1"), ()),
        Action("CppCompile", "//c10/core:base", ("gcc", "-DUSE_CUDA=1"), ()),
    ]
    assert [f.render() for f in check_flags(flags, layers, policy)] == [
        "FLAGS [core-to-toolkit] //c10/core:base: core -> cuda toolkit: its CppCompile action "
        "receives '-DUSE_CUDA=1', a define of cuda"
    ]
