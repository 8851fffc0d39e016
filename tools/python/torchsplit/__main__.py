"""Entry point for ``python3 -m torchsplit``."""

import sys

from torchsplit.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
