"""Checks a new backend end to end: build, reorg self-check, layering audit, a tensor on it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from torchsplit.backend.naming import BackendNames
from torchsplit.bazel_run import Bazel, default_bazel
from torchsplit.errors import TorchsplitError

SELF_RULES = "tools/reorg/torchsplit_self.toml"


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
    return (
        "import torch_core as tc\n"
        f"import {names.package}\n"
        f"t = tc.ones(3, device='{names.device}:0')\n"
        "u = (t + t).to('cpu')\n"
        f"assert str(t.device) == '{names.device}:0' and u.numpy().tolist() == [2.0, 2.0, 2.0]\n"
        "print(str(t.device), u.numpy().tolist())\n"
    )


def verify(root: Path, names: BackendNames, say: Callable[[str], None]) -> None:
    bazel = Bazel(workspace=root, command=[default_bazel(root)])
    package = f"//third_device/{names.package}"
    say(f"build {package}:all")
    bazel.run("build", f"{package}:all", "//core:torch_core")

    say("reorg check (build_variables lists vs BUILD files)")
    proc = _tool(
        root, "reorg", "check", "--build-variables", "build_variables.bzl",
        "--rules", SELF_RULES, "--bazel", default_bazel(root),
    )  # fmt: skip
    if proc.returncode != 0:
        raise TorchsplitError(f"reorg check disagrees:\n{proc.stdout[-3000:]}{proc.stderr}")
    agree = [line for line in proc.stdout.splitlines() if line.startswith(package)]
    if len(agree) != 6 or not all(line.endswith(": ok") for line in agree):
        raise TorchsplitError(
            f"reorg check did not compare {package}'s six modules:\n{proc.stdout}"
        )

    say("layering audit")
    proc = _tool(root, "audit", "--bazel", default_bazel(root))
    if proc.returncode != 0:
        raise TorchsplitError(f"layering audit failed:\n{proc.stdout[-3000:]}{proc.stderr}")

    say(f"smoke tensor on {names.device}:0")
    bin_dir = root / "bazel-bin"
    paths = [
        root / "core",
        bin_dir / "core",
        root / "third_device" / names.package,
        bin_dir / "third_device" / names.package,
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(p) for p in paths),
        "TORCH_CORE_NO_AUTOLOAD": "1",
    }
    proc = subprocess.run(
        [sys.executable, "-c", smoke_code(names)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        raise TorchsplitError(f"no tensor on {names.device}:0:\n{proc.stderr[-3000:]}")
    say(f"  {proc.stdout.strip()}")
