"""README.md's top example in a development build, exactly as the README says to run it.

The README gives a PYTHONPATH for using the built tree without installing and
says the example at the top then runs as it is: both are read from the README
itself, so the text and the behaviour cannot drift apart. (tests/install runs
the same blocks against the installed wheels.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from builds import REPO

README = (REPO / "README.md").read_text()


def _dev_pythonpath() -> str:
    match = re.search(r"`PYTHONPATH=(\S+) ~/\.cache/torchsplit/venv/bin/python`", README)
    assert match, "README.md no longer shows the development build's PYTHONPATH"
    return match.group(1)


def _top_example() -> str:
    match = re.search(r"^```python\n(.*?)^```", README, re.MULTILINE | re.DOTALL)
    assert match, "README.md has no python block"
    return match.group(1)


def test_the_top_example_autoloads_the_built_backend() -> None:
    pythonpath = _dev_pythonpath()
    for entry in pythonpath.split(":"):
        assert (REPO / entry).is_dir(), f"{entry} is missing: run tools/dev build first"
    env = {k: v for k, v in os.environ.items() if k != "TORCH_CORE_NO_AUTOLOAD"}
    env["PYTHONPATH"] = pythonpath  # relative, as the README writes it: run from the checkout
    proc = subprocess.run(
        [sys.executable, "-c", _top_example()],  # the venv's python, as the README says
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("tensor([[0.5"), proc.stdout


def test_without_autoload_the_backend_is_named_in_the_error() -> None:
    """TORCH_CORE_NO_AUTOLOAD=1 turns it off, as the README says (then import torch_emu)."""
    proc = subprocess.run(
        [sys.executable, "-c", _top_example()],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": _dev_pythonpath(), "TORCH_CORE_NO_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "unknown device type 'emu' in 'emu:0' (registered: cpu)" in proc.stderr, proc.stderr
