"""tools/dev installs only the CUDA toolkit a command's Bazel flags use (README.md).

Each run points TORCHSPLIT_CUDA_CACHE at a scratch directory: a lock counts as
installed when its directory has the `.torchsplit-installed` stamp, so these
runs download nothing when the selection is right (and would try to, and say
so, when it is wrong). The default selection is not run here: it rewrites the
shared venv's torchsplit-cuda.pth, which other runs read; every `tools/dev
build` exercises it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from builds import REPO

PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
LOCKS = REPO / "tools" / "cuda"
DEFAULT = LOCKS / "requirements_lock.txt"
CUDA13_5 = LOCKS / "requirements_lock_13_5.txt"


def _dir(cache: Path, lock: Path) -> Path:
    return cache / hashlib.sha256(lock.read_bytes()).hexdigest()


def _stamp(cache: Path, lock: Path) -> None:
    """Marks `lock` installed without installing it."""
    _dir(cache, lock).mkdir(parents=True)
    (_dir(cache, lock) / ".torchsplit-installed").write_text(lock.read_text())


@pytest.fixture(autouse=True)
def _keep_the_venvs_cuda_path() -> Iterator[None]:
    """A wrong selection would point the shared venv's torchsplit-cuda.pth at the scratch cache."""
    venv = Path(os.environ.get("TORCHSPLIT_VENV", Path.home() / ".cache/torchsplit/venv"))
    site = subprocess.run(
        [str(venv / "bin" / "python3"), "-c", PURELIB],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    pth = Path(site) / "torchsplit-cuda.pth"
    before = pth.read_bytes() if pth.exists() else None
    yield
    if before is not None and pth.read_bytes() != before:
        pth.write_bytes(before)
        pytest.fail("tools/dev bootstrap rewrote torchsplit-cuda.pth (restored)")


def _bootstrap(cache: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    if not (REPO / "node_modules" / ".bin" / "bazelisk").exists():
        pytest.fail("run tools/dev bootstrap first (node_modules is missing)")
    return subprocess.run(
        [str(REPO / "tools" / "dev"), "bootstrap", *flags],
        env={**os.environ, "TORCHSPLIT_CUDA_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("flags", [["--config=cpu-only"], ["--@rules_cuda//cuda:enable=false"]])
def test_a_build_without_cuda_installs_no_toolkit(tmp_path: Path, flags: list[str]) -> None:
    proc = _bootstrap(tmp_path, *flags)
    assert proc.returncode == 0, proc.stderr
    assert "installing the CUDA toolkit" not in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "flags", [["--config=cuda13_5"], ["--repo_env=HERMETIC_CUDA_VERSION=13.5.37"]]
)
def test_cuda13_5_installs_its_lock_only(tmp_path: Path, flags: list[str]) -> None:
    _stamp(tmp_path, CUDA13_5)  # installed; the default lock is not, and must stay so
    proc = _bootstrap(tmp_path, *flags)
    assert proc.returncode == 0, proc.stderr
    assert "installing the CUDA toolkit" not in proc.stderr, proc.stderr
    assert not _dir(tmp_path, DEFAULT).exists()
