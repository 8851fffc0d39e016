"""Checks a new backend before it is written: built from a scratch directory, then audited.

Bazel reads the new package (and, for a derived backend, the layering policy
that names it) from the scratch root through ``--package_path=<scratch>:%workspace%``:
the checkout's own server and output base build it, so core is not rebuilt,
and nothing is written to the tree until the build, the package's layering
graph test, its source lists against its BUILD targets and an import (a
tensor on the device where one exists) have passed. The audit, which reads the
tree itself, runs once the backend is in place (cli.py removes it again when
the audit fails).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from torchsplit.backend.naming import BackendNames, backend_modules
from torchsplit.bazel_run import Bazel, default_bazel
from torchsplit.errors import TorchsplitError
from torchsplit.reorg.selfcheck import DEFAULT_SUFFIXES, label_to_path, srcs_query
from torchsplit.reorg.starlark_eval import evaluate


def _tool(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root / "tools" / "python")}
    return subprocess.run(
        [sys.executable, "-m", "torchsplit", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def smoke_code(names: BackendNames) -> str:
    """Imports the backend; makes a tensor on its device, or prints why there is none."""
    return (
        "import torch_core as tc\n"
        f"import {names.package}\n"
        f"if not tc.is_available('{names.device}'):\n"
        f"    assert '{names.device}' in tc.registered_device_types()\n"
        f"    tc.ones(1, device='{names.device}:0')  # raises, naming why\n"
        f"t = tc.ones(3, device='{names.device}:0')\n"
        "u = (t + t).to('cpu')\n"
        f"assert str(t.device) == '{names.device}:0' and u.numpy().tolist() == [2.0, 2.0, 2.0]\n"
        "print(str(t.device), u.numpy().tolist())\n"
    )


def check_lists(bazel: Bazel, flags: list[str], scratch: Path, names: BackendNames) -> int:
    """Its build_variables.bzl lists against what each module target compiles (reorg check's
    comparison, for the scratch package); returns the number of modules compared."""
    variables = scratch / "third_device" / names.package / "build_variables.bzl"
    lists = evaluate(variables, display_name=f"third_device/{names.package}/build_variables.bzl")
    problems: list[str] = []
    modules = backend_modules(bazel.workspace)
    for module in modules:
        listed = lists.lists.get(f"{names.package}_{module}_sources")
        if listed is None:
            problems.append(f"no {names.package}_{module}_sources list")
            continue
        target = f"//third_device/{names.package}:{module}"
        labels = bazel.lines("query", *flags, srcs_query(target), "--output=label")
        have = {p for p in map(label_to_path, labels) if p and p.endswith(DEFAULT_SUFFIXES)}
        want = {p for p in listed if p.endswith(DEFAULT_SUFFIXES)}
        problems += [f"{target} does not compile {p}, listed for it" for p in sorted(want - have)]
        problems += [f"{target} compiles {p}, listed nowhere" for p in sorted(have - want)]
    if problems:
        raise TorchsplitError(
            "source lists and BUILD targets disagree:\n  " + "\n  ".join(problems)
        )
    return len(modules)


def verify_scratch(
    root: Path, scratch: Path, names: BackendNames, say: Callable[[str], None]
) -> None:
    """Everything that can run before the backend is written (the module docstring)."""
    bazel = Bazel(workspace=root, command=[default_bazel(root)])
    flags = [f"--package_path={scratch}:%workspace%"]
    package = f"//third_device/{names.package}"
    say(f"build {package}:all (from the scratch directory {scratch})")
    bazel.run("build", *flags, f"{package}:all", "//core:torch_core")
    say("layering graph test (every select() branch)")
    bazel.run("test", *flags, f"{package}:layering_graph_test")
    compared = check_lists(bazel, flags, scratch, names)
    say(f"source lists against the BUILD targets ({compared} modules)")

    say(f"import {names.package}; a tensor on {names.device}:0")
    bin_dir = root / "bazel-bin"
    paths = [
        root / "core",
        bin_dir / "core",
        scratch / "third_device" / names.package,
        bin_dir / "third_device" / names.package,
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(p) for p in paths),
        "TORCH_CORE_NO_AUTOLOAD": "1",
    }
    proc = subprocess.run(
        [sys.executable, "-c", smoke_code(names)],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if proc.returncode == 0:
        say(f"  {proc.stdout.strip()}")
        return
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    if "is not usable" in last:
        # Registered, but no device here (a HIP backend without an AMD GPU): not a failure.
        say(f"  registered '{names.device}'; no device here: {last.split(': ', 1)[-1]}")
        return
    raise TorchsplitError(f"import {names.package} failed:\n{proc.stderr[-3000:]}")


def verify_in_place(root: Path, say: Callable[[str], None]) -> None:
    """The layering audit over the tree with the backend in it."""
    say("layering audit")
    proc = _tool(root, "audit", "--bazel", default_bazel(root))
    if proc.returncode != 0:
        raise TorchsplitError(f"layering audit failed:\n{proc.stdout[-3000:]}{proc.stderr}")
