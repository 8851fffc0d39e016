"""The ``torchsplit`` command line: one parser, subcommand families registered by modules.

Each family module exposes ``register(subparsers)`` and sets ``func`` on its parsers;
add a family by appending its module name to ``FAMILIES``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from torchsplit import __version__
from torchsplit.errors import TorchsplitError

FAMILIES: tuple[str, ...] = (
    "torchsplit.reorg.cli",
    "torchsplit.scan.cli",
    "torchsplit.audit.cli",
    "torchsplit.cache.cli",
    "torchsplit.affected.cli",
    "torchsplit.backend.cli",
    "torchsplit.upstream.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchsplit",
        description="Split device backends out of a PyTorch-style core: reorganise build "
        "lists (reorg) and find CUDA couplings inside files (scan).",
    )
    parser.add_argument("--version", action="version", version=f"torchsplit {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in FAMILIES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.func(args))
    except TorchsplitError as exc:
        print(f"torchsplit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1
