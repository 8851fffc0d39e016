"""`torchsplit new-backend` in a scratch copy: a backend that builds and passes conformance.

Slow (a Bazel build in a fresh output base, mostly served by the disk cache):
marked `bazel`, it runs in `tools/dev test`.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.audit.policy import load_policy
from torchsplit.backend import generate, naming
from torchsplit.checkout import copy_checkout, git, snapshot

pytestmark = pytest.mark.bazel


def _run(checkout: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args),
        cwd=checkout,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=3600,
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("new-backend") / "checkout"
    copy_checkout(REPO, root)
    # A checkout where someone already ran the command (e.g. the README's example)
    # holds an untracked torch_acme: the test makes its own.
    shutil.rmtree(root / "third_device" / "torch_acme", ignore_errors=True)
    if (REPO / "user.bazelrc").exists():  # the shared disk cache, like the real checkout
        shutil.copy2(REPO / "user.bazelrc", root / "user.bazelrc")
    snapshot(root)
    yield root
    _run(root, str(root / "tools" / "bazel"), "shutdown")


def test_new_backend_builds_verifies_and_passes_conformance(checkout: Path) -> None:
    tool = str(checkout / "tools" / "torchsplit")
    proc = _run(checkout, tool, "new-backend", "torch_acme")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Built and imported from the scratch directory before anything was written.
    assert "(from the scratch directory " in proc.stdout
    assert "a tensor on acme:0" in proc.stdout and "acme:0 [2.0, 2.0, 2.0]" in proc.stdout

    # The new backend's directory and its label in //:all_files (what workspace tests
    # copy): no other central edit.
    status = git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert " M BUILD.bazel" in status
    others = [line for line in status if line != " M BUILD.bazel"]
    assert others and all(line[3:].startswith("third_device/torch_acme/") for line in others)
    assert '"//third_device/torch_acme:all_files",' in (checkout / "BUILD.bazel").read_text()
    acme = checkout / "third_device" / "torch_acme"
    assert (acme / "csrc" / "framework" / "AcmeDriver.cpp").is_file()
    text = (acme / "torch_acme" / "distributed" / "__init__.py").read_text()
    assert 'register_backend("accl"' in text and "eccl" not in text
    assert "TORCH_ACME_DEVICES" in (acme / "csrc" / "framework" / "AcmeDriver.cpp").read_text()

    # A second copy whose default process-group name (eccl) torch_emu holds:
    # --collective-name picks another.
    proc = _run(checkout, tool, "new-backend", "torch_ecu", "--collective-name", "xccl")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = checkout / "third_device" / "torch_ecu" / "torch_ecu" / "distributed" / "__init__.py"
    assert 'register_backend("xccl"' in text.read_text()

    # The conformance suite finds acme and ecu by themselves, beside emu, in one process.
    built = _run(checkout, str(checkout / "tools" / "bazel"), "build", "//third_device/torch_emu")
    assert built.returncode == 0, built.stderr[-3000:]
    proc = _run(
        checkout, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/conformance", TORCHSPLIT_CONFORMANCE_BACKENDS="torch_acme,torch_ecu,torch_emu",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    table = proc.stdout[proc.stdout.index("capability x backend") :]
    assert "acme" in table and "ecu" in table and "FAIL" not in table
    # Each copy passes exactly what its template passes, capability by capability,
    # with nothing skipped (the backends' columns in the order given).
    rows = [line.split() for line in table.splitlines()[2:] if line[:1].isalpha()]
    capabilities = {"device", "memory", "streams", "copies", "ops", "profiler", "fusion"}
    capabilities.add("distributed")
    rows = [r for r in rows if r[0] in capabilities]
    assert {r[0] for r in rows} == capabilities, table
    for row in rows:
        assert row[1] == "pass" and "skip" not in row, table
        assert row[1:3] == row[3:5] == row[5:7], table


def test_new_backend_refuses_an_existing_backend_and_taken_names(checkout: Path) -> None:
    tool = str(checkout / "tools" / "torchsplit")
    before = git(checkout, "status", "--porcelain", "--untracked-files=all")
    proc = _run(checkout, tool, "new-backend", "torch_emu")
    assert proc.returncode == 2
    assert "backend torch_emu exists already" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = _run(checkout, tool, "new-backend", "torch_other", "--device-name", "emu",
                "--collective-name", "eccl")  # fmt: skip
    assert proc.returncode == 2
    assert "device type 'emu' is already held by torch_emu (choose --device-name)" in proc.stderr
    assert "process-group backend 'eccl' is already held by torch_emu" in proc.stderr
    # A toolkit backend is never copied: refused before anything is written.
    proc = _run(checkout, tool, "new-backend", "torch_musa", "--from", "torch_cuda")
    assert proc.returncode == 2
    assert "--from torch_cuda --translate hip" in proc.stderr
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == before


HIP_HERE = shutil.which("hipcc") is not None and importlib.util.find_spec("torch") is not None


@pytest.mark.skipif(not HIP_HERE, reason="no hipcc or no torch wheel: torch_hip is not buildable")
def test_new_backend_derives_from_torch_cuda_with_translate_hip(checkout: Path) -> None:
    tool = str(checkout / "tools" / "torchsplit")
    before = set(git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines())
    proc = _run(
        checkout, tool, "new-backend", "torch_musa", "--from", "torch_cuda", "--translate", "hip"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "registered 'musa'; no device here" in proc.stdout or "musa:0 [2.0" in proc.stdout
    # The backend, the layering policy's entries granting it torch_hip's toolkit and naming
    # the derivation, and MODULE.bazel's toolkit visibility (WORKSPACE reads the policy's).
    after = set(git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines())
    changed = {line[3:] for line in after - before}
    # The root BUILD.bazel (//:all_files) may be changed already, by torch_acme's test.
    assert {"/".join(c.split("/")[:2]) for c in changed} - {"BUILD.bazel"} == {
        "third_device/torch_musa", "tools/layering", "MODULE.bazel",
    }, changed  # fmt: skip
    assert '"//third_device/torch_musa:all_files",' in (checkout / "BUILD.bazel").read_text()
    assert " M tools/layering/policy.bzl" in after and " M MODULE.bazel" in after
    assert "layering audit" in proc.stdout  # ran on the tree with torch_musa in place
    policy = load_policy(checkout / "tools" / "layering" / "policy.bzl")
    assert policy.toolkits["torch_musa"] == policy.toolkits["torch_hip"]
    assert policy.derived["torch_musa"] == policy.derived["torch_hip"]
    # The checkout's own build sees it too: visibility, the aspect and its graph test.
    bazel = str(checkout / "tools" / "bazel")
    built = _run(checkout, bazel, "test", "//third_device/torch_musa:layering_graph_test")
    assert built.returncode == 0, built.stderr[-3000:]
    musa = checkout / "third_device" / "torch_musa"
    assert not (musa / "csrc" / "aten").exists()  # kernels come from torch_cuda, translated
    assert '"cuda": "musa"' in (musa / "build_variables.bzl").read_text()
    proc = _run(
        checkout, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/conformance", TORCHSPLIT_CONFORMANCE_BACKENDS="torch_musa",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "musa: every capability skipped: musa: device 'musa:0' is not usable" in proc.stdout


@pytest.mark.skipif(not HIP_HERE, reason="no hipcc or no torch wheel: torch_hip is not buildable")
def test_a_hand_made_derived_backend_is_refused_three_ways(checkout: Path) -> None:
    """third_device/torch_zap written by hand (the files new-backend would write, without the
    policy's grant): visibility, the aspect and the audit each refuse it, naming why."""
    zap = checkout / "third_device" / "torch_zap"
    model = naming.read_derived(checkout, "torch_hip")
    derivation = generate.Derivation("torch_cuda", "hip", model, ("hipify_sources",))
    names = naming.BackendNames("torch_zap", "zap", "_ZAPC", "")
    for rel, text in generate.render_derived(checkout, derivation, names).items():
        (zap / rel).parent.mkdir(parents=True, exist_ok=True)
        (zap / rel).write_text(text)
    # And, as a vendor might, the HIP toolkit used directly.
    with (zap / "BUILD.bazel").open("a") as build:
        build.write('\ncc_library(name = "hip_probe", deps = ["@local_hip//:headers"])\n')
    bazel = str(checkout / "tools" / "bazel")
    target = "//third_device/torch_zap:all"
    try:
        proc = _run(checkout, bazel, "build", "--nobuild", "--keep_going", target)
        assert proc.returncode != 0
        # Visibility: the toolkit is its backends' (TOOLKITS), torch_cuda's sources are
        # exported to its derived backends only (DERIVED_BACKENDS).
        err = proc.stderr
        assert (
            "target '@local_hip//:headers' is not visible from target "
            "'//third_device/torch_zap:hip_probe'"
        ) in err, err[-3000:]
        assert "target '//third_device/torch_cuda:csrc/" in err
        assert "is not visible from target '//third_device/torch_zap:aten_translated'" in err
        # Visibility off: the aspect fails analysis, naming the edge and the policy rule.
        proc = _run(
            checkout, bazel, "build", "--nobuild", "--keep_going", "--check_visibility=false",
            target,
        )  # fmt: skip
        assert proc.returncode != 0
        err = proc.stderr
        assert (
            "//third_device/torch_zap:hip_probe cannot depend on @local_hip//:headers (layering "
            "policy rule repositories: @local_hip is not among the repositories this layer may "
            "reach (REPOSITORIES, TOOLKITS))"
        ) in err, err[-3000:]
        assert (
            "//third_device/torch_zap:aten_translated cannot depend on "
            "//third_device/torch_cuda:csrc/aten/CUDAKernels.cpp (layering policy rule "
            "backend-to-backend"
        ) in err, err[-3000:]
        # The audit: its graph and BUILD-file checks.
        proc = _run(checkout, str(checkout / "tools" / "torchsplit"), "audit")
        assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
        out = proc.stdout
        assert (
            "VIOLATION [backend-to-backend] //third_device/torch_zap:aten_translated cannot "
            "depend on //third_device/torch_cuda:csrc/aten/CUDAKernels.cpp"
        ) in out, out[-3000:]
        assert "VIOLATION [repositories] //third_device/torch_zap:" in out
        assert "@local_hip is not among the repositories backend torch_zap may reach" in out
        assert "torch_zap -> @local_hip: @local_hip//:headers is in @local_hip" in out
        # Its own headers (Nccl.h, NvtxRange.h, translated) are not vendor SDK headers.
        assert "0 header violation(s)" in out
    finally:
        shutil.rmtree(zap, ignore_errors=True)
