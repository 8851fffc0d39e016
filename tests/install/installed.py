"""Helpers of the installed-wheel tests (tests/install): wheel names, pins, the virtualenv."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from builds import REPO

WHEEL_NAME = re.compile(
    r"^(?P<dist>torch_[a-z]+)-(?P<version>[0-9.]+)-(?P<py>cp3\d+)-(?P=py)-(?P<platform>\w+)\.whl$"
)


def requirement_pins() -> dict[str, str]:
    """name -> version pinned by the CUDA lock (torch_cuda's wheel `pins`) and requirements.txt."""
    pins = {}
    lines = (REPO / "requirements.txt").read_text().splitlines()
    lines += (REPO / "tools" / "cuda" / "requirements_lock.txt").read_text().splitlines()
    for line in lines:
        match = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", line)
        if match:
            pins[match.group(1)] = match.group(2)
    return pins


@dataclass
class Venv:
    python: Path
    site_packages: Path
    workdir: Path
    pip_log: str

    def run(self, code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Runs Python code in the venv, from a directory outside the checkout."""
        clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        clean.update(env or {})
        return subprocess.run(
            [str(self.python), "-c", code],
            cwd=self.workdir,
            env=clean,
            capture_output=True,
            text=True,
            timeout=600,
        )


def pip_install(python: Path, *args: str) -> str:
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout
