"""The checkout, Bazel run on it, and what its build produced.

Tests import these from here, never from ``conftest``: several directories have a
conftest.py, and which one ``import conftest`` finds depends on what pytest
collected first.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

# Set by a workspace test's first process to its copy of the checkout; the processes
# it starts (pytest in the copy, the CLI) find it here instead of copying again.
CHECKOUT_ENV = "TORCHSPLIT_TEST_CHECKOUT"
# A workspace test's manifest (tests/suites.bzl, //:workspace): its declared files.
MANIFEST_ENV = "TORCHSPLIT_TEST_WORKSPACE"
# Targets a workspace test needs built in its copy before it runs (tests/suites.bzl).
BUILD_ENV = "TORCHSPLIT_TEST_BUILD"
# Bazel configs the nested Bazel uses too (tools/dev test passes remote-cache here).
CONFIGS_ENV = "TORCHSPLIT_TEST_BAZEL_CONFIGS"


def _materialize(srcdir: Path, manifest: Path, target: Path) -> None:
    """Copies a workspace test's declared files into `target`, each where it belongs in a
    checkout, and points the copy's Bazel at an output root under TEST_TMPDIR."""
    for line in manifest.read_text(encoding="utf-8").splitlines():
        source, _, relative = line.partition("\t")
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source == "-":  # a graph-only copy: the name, not the content
            destination.touch()
        else:
            shutil.copy2(srcdir / source, destination)
    # A git repository with one commit, as a fresh clone is: copy_checkout, tools/dev
    # lint and the mutation harness list the files through git.
    identity = ["-c", "user.name=torchsplit tests", "-c", "user.email=tests@torchsplit.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "declared workspace"]):
        subprocess.run(["git", *identity, *args], cwd=target, check=True, capture_output=True)
    tmp = Path(os.environ["TEST_TMPDIR"])
    # A login shell's PATH, not `bazel test`'s /bin:/usr/bin:/usr/local/bin: Bazel's C++
    # toolchain detection records where it found gcc (/usr/bin/gcc, not /bin/gcc), and
    # that path is in every compile action's key: the nested build must hit the cache
    # entries of a build run by hand.
    os.environ["PATH"] = os.pathsep.join(
        ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    )
    settings = [
        f"startup --output_user_root={tmp / 'bazel'}",
        # Servers of copies made from this one (their own output bases) go away by themselves.
        "startup --max_idle_secs=60",
        *(f"build --config={c}" for c in os.environ.get(CONFIGS_ENV, "").split(",") if c),
    ]
    (target / "user.bazelrc").write_text("\n".join(settings) + "\n", encoding="utf-8")
    # bazelisk, buildifier, buildozer: tools/dev bootstrap keeps a copy of node_modules
    # per package-lock.json (like the CUDA toolkits), outside any checkout.
    lock = hashlib.sha256((target / "package-lock.json").read_bytes()).hexdigest()
    modules = Path.home() / ".cache" / "torchsplit" / "node_modules" / lock
    if (modules / "node_modules" / ".bin").is_dir():
        (target / "node_modules").symlink_to(modules / "node_modules")
    atexit.register(_shutdown, target)
    # What the test expects built (tools/dev build's part of it): bazel-bin in the copy.
    targets = os.environ.get(BUILD_ENV, "").split()
    if targets:
        proc = subprocess.run(
            [str(target / "tools" / "bazel"), "build", *targets],
            cwd=target,
            capture_output=True,
            text=True,
            check=False,
            timeout=3000,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"bazel build {' '.join(targets)} failed:\n{proc.stderr[-4000:]}")


def _shutdown(checkout: Path) -> None:
    """The copy's Bazel server stops with the test."""
    subprocess.run(
        [str(checkout / "tools" / "bazel"), "shutdown"],
        cwd=checkout,
        capture_output=True,
        check=False,
        timeout=120,
    )


def _checkout() -> Path:
    """The checkout tests read: the source tree, or under `bazel test` the runfiles, or for
    a workspace test (tests/suites.bzl) a copy of its declared files in TEST_TMPDIR."""
    here = Path(__file__).absolute().parent.parent
    srcdir = os.environ.get("TEST_SRCDIR")
    if not srcdir or not here.is_relative_to(Path(srcdir).absolute()):
        return Path(__file__).resolve().parent.parent  # a checkout (perhaps a test's copy)
    if not os.environ.get(MANIFEST_ENV):
        return here
    if os.environ.get(CHECKOUT_ENV):
        return Path(os.environ[CHECKOUT_ENV])
    target = Path(os.environ["TEST_TMPDIR"]) / "checkout"
    _materialize(Path(srcdir), here / os.environ[MANIFEST_ENV], target)
    os.environ[CHECKOUT_ENV] = str(target)
    return target


REPO = _checkout()

NO_CUDA_BUILD = (
    "torch_cuda was not built here (cpu-only build or no CUDA toolkit: "
    "tools/dev build names the reason)"
)


NO_HIP_BUILD = (
    "torch_hip was not built here (no HIP toolkit, no torch wheel to hipify with, or a "
    "cpu-only build: tools/dev build names the reason)"
)


FAKE_DEVICE_TARGET = "//tests:backends/_fake_device.so"


def import_fake_device() -> ModuleType:
    """The test-only "fake" backend (registers device type "fake"), or an error naming its build.

    tools/dev build and tools/dev test build it; a build of only //core:all
    and the backends does not.
    """
    try:
        return importlib.import_module("_fake_device")
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "the test-only backend _fake_device is not built: run tools/dev build "
            f"(it builds {FAKE_DEVICE_TARGET}) or bazelisk build {FAKE_DEVICE_TARGET}"
        ) from error


def extension_built(backend: str, extension: str) -> bool:
    """Whether a backend's extension is in bazel-bin (checkout) or beside the sources (runfiles)."""
    return any(
        (base / f"third_device/{backend}/{backend}/{extension}.so").exists()
        for base in (REPO / "bazel-bin", REPO)
    )


def cuda_extension_built() -> bool:
    return extension_built("torch_cuda", "_CUDAC")


class _NotBuilt(pytest.Item):
    def runtest(self) -> None:
        pytest.skip(self.parent.reason)  # type: ignore[union-attr]


class _NotBuiltModule(pytest.File):
    reason = ""

    def collect(self) -> Iterator[pytest.Item]:
        yield _NotBuilt.from_parent(self, name=self.path.stem)


def not_built(module_path: Path, parent: pytest.Collector, reason: str) -> pytest.File:
    """A test file whose backend was not built, as one skipped test naming why (for a
    conftest's pytest_pycollect_makemodule: the file, which imports the backend at
    module level, is not imported at all)."""
    module = _NotBuiltModule.from_parent(parent, path=module_path)
    module.reason = reason
    return module


def bazel_command() -> list[str]:
    """The launcher the README uses: bazelisk from node_modules, else tools/bazel."""
    bazelisk = REPO / "node_modules" / ".bin" / "bazelisk"
    if bazelisk.exists():
        return [str(bazelisk)]
    return [str(REPO / "tools" / "bazel")]


class Bazel:
    """Runs Bazel in the repository (same server and output base as the build)."""

    def __init__(self, workspace: Path = REPO, startup: list[str] | None = None) -> None:
        self.workspace = workspace
        self.startup = startup or []

    def run(
        self, *args: str, env: dict[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run(
            [*bazel_command(), *self.startup, *args],
            cwd=self.workspace,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"bazel {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}"
            )
        return proc
