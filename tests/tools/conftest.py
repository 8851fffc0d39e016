"""Put tools/python on sys.path so tests import the torchsplit package from the checkout."""

import sys
from pathlib import Path

TOOLS_PYTHON = Path(__file__).resolve().parents[2] / "tools" / "python"
if str(TOOLS_PYTHON) not in sys.path:
    sys.path.insert(0, str(TOOLS_PYTHON))
