"""The restructured tree's layering policy: valid for the audit, naming the judged couplings,
and the audit's KNOWN_INCLUDES entries checked for shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsplit.audit.policy import load_policy
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
    # The CUDA toolkits are torch_cuda's own (the TOOLKITS shape), not every backend's.
    assert {"local_cuda", "cuda_host_12_6"} <= set(policy.toolkits["torch_cuda"].repositories)
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
