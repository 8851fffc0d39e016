"""torchsplit: tools that split a deep-learning framework's device backends out of its core.

Subcommand families (see ``cli.py``): ``reorg`` reorganises a PyTorch-style
``build_variables.bzl`` into per-device targets; ``scan`` finds CUDA couplings left
inside source files.
"""

__version__ = "0.1.0"
