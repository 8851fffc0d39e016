"""Backends are found through the ``torch_core.backends`` entry point group."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _python(code: str, extra_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(extra_path), *sys.path]), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _install_fake_distribution(root: Path, module: str, body: str) -> None:
    """A minimal installed distribution declaring one backend entry point."""
    (root / f"{module}.py").write_text(body)
    dist = root / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[torch_core.backends]\n{module} = {module}\n")


def test_installed_backend_is_imported_with_torch_core(tmp_path: Path) -> None:
    _install_fake_distribution(tmp_path, "demo_backend", "LOADED = True\n")
    proc = _python("import sys, torch_core; print('demo_backend' in sys.modules)", tmp_path)
    assert proc.stdout.strip() == "True", proc.stderr


def test_autoload_can_be_disabled(tmp_path: Path) -> None:
    _install_fake_distribution(tmp_path, "demo_backend", "LOADED = True\n")
    proc = _python(
        "import sys, torch_core; print('demo_backend' in sys.modules)",
        tmp_path,
        TORCH_CORE_NO_AUTOLOAD="1",
    )
    assert proc.stdout.strip() == "False", proc.stderr


def test_a_broken_backend_is_named(tmp_path: Path) -> None:
    _install_fake_distribution(tmp_path, "broken_backend", "raise RuntimeError('no driver')\n")
    proc = _python("import torch_core", tmp_path)
    assert proc.returncode != 0
    assert (
        "torch_core backend 'broken_backend' (broken_backend) failed to load: no driver"
        in proc.stderr
    )
    assert "TORCH_CORE_NO_AUTOLOAD=1" in proc.stderr
