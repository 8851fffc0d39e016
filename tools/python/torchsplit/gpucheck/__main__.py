"""``python3 -m torchsplit.gpucheck``: print the GPU report or exit 2."""

from __future__ import annotations

import sys

from torchsplit.errors import TorchsplitError
from torchsplit.gpucheck import device_report


def main() -> int:
    try:
        lines = device_report()
    except TorchsplitError as error:
        print(f"torchsplit: error: {error}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
