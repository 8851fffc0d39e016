"""The conformance suite's harness: a backend that was not built skips, a broken one fails.

tools/dev build skips a backend it cannot build (torch_cuda with --config=cpu-only)
and names why; the suite then skips that backend's column with the reason. A backend
whose extension exists but does not import must still fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from builds import REPO


def _run_suite(root: Path, package: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         str(REPO / "tests" / "conformance" / "test_device.py")],
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root), *sys.path]),
            "TORCHSPLIT_CONFORMANCE_BACKENDS": package,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip


def _package(root: Path, name: str) -> Path:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("from . import _EXTC  # noqa: F401\n")
    (package / "testing.py").write_text(
        "from torch_core.testing import BackendAdapter\n"
        f"ADAPTER = BackendAdapter(device_type='nodev', package={name!r})\n"
    )
    return package


def test_a_backend_without_its_extension_skips_naming_the_build(tmp_path: Path) -> None:
    _package(tmp_path, "torch_unbuilt")
    proc = _run_suite(tmp_path, "torch_unbuilt")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "torch_unbuilt is not built here" in proc.stdout, proc.stdout
    assert "tools/dev build" in proc.stdout
    assert " passed" not in proc.stdout


def test_a_backend_whose_extension_does_not_import_fails(tmp_path: Path) -> None:
    package = _package(tmp_path, "torch_broken")
    (package / "_EXTC.so").write_bytes(b"not an ELF object")
    proc = _run_suite(tmp_path, "torch_broken")
    assert proc.returncode != 0, proc.stdout
    assert "not built here" not in proc.stdout
    assert "ImportError" in proc.stdout, proc.stdout
