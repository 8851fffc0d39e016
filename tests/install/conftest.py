"""Fixtures of the installed-wheel tests: release wheels, and a fresh virtualenv with them.

The wheels are built with `--config=release` (no bazel-* symlinks, so the
development tree's bazel-bin is untouched); the virtualenv lives in a
temporary directory outside the checkout and every snippet runs from there
with a clean environment, so nothing of the source tree can be imported.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from installed import WHEEL_NAME, Venv, pip_install, requirement_pins

from builds import REPO


@pytest.fixture(scope="session")
def wheels(bazel) -> dict[str, Path]:
    """distribution -> release wheel (torch_cuda's only where CUDA can be built)."""
    bazel.run("build", "--config=release", "//:wheels")
    bin_dir = Path(bazel.run("info", "--config=release", "bazel-bin").stdout.strip())
    found: dict[str, Path] = {}
    # Oldest first: Bazel leaves wheels of earlier versions or tags beside the new one.
    built = [*bin_dir.glob("core/*.whl"), *bin_dir.glob("third_device/*/*.whl")]
    for wheel in sorted(built, key=lambda p: p.stat().st_mtime):
        match = WHEEL_NAME.match(wheel.name)
        assert match, f"unexpected wheel name {wheel.name}"
        found[match.group("dist")] = wheel
    assert {"torch_core", "torch_emu"} <= found.keys(), found
    return found


@pytest.fixture(scope="session")
def venv(wheels: dict[str, Path]) -> Iterator[Venv]:
    """A new virtualenv with the wheels installed: core's from the files only, never an index."""
    root = Path(tempfile.mkdtemp(prefix="torchsplit-install-"))
    assert REPO not in root.parents
    python = root / "venv" / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    pins = requirement_pins()
    log = pip_install(python, f"numpy=={pins['numpy']}")
    # torch_core and torch_emu need nothing from an index but numpy.
    local = [str(wheels[d]) for d in ("torch_core", "torch_emu")]
    log += pip_install(python, "--no-index", *local)
    if "torch_cuda" in wheels:
        # torch_cuda pulls NVIDIA's wheels from the index; torch_core is satisfied already.
        log += pip_install(python, str(wheels["torch_cuda"]))
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    workdir = root / "work"
    workdir.mkdir()
    yield Venv(python=python, site_packages=site, workdir=workdir, pip_log=log)
    shutil.rmtree(root, ignore_errors=True)
