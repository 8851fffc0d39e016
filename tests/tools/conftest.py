"""Put tools/python on sys.path so tests import the torchsplit package from the checkout."""

import os
import stat
import sys
from pathlib import Path

import pytest

TOOLS_PYTHON = Path(__file__).absolute().parents[2] / "tools" / "python"
if str(TOOLS_PYTHON) not in sys.path:
    sys.path.insert(0, str(TOOLS_PYTHON))


@pytest.fixture
def null_device(tmp_path: Path) -> Path:
    """A private character device with /dev/null's numbers (1, 3); needs root."""
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root (CAP_MKNOD)")
    return node
