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
    "torchsplit.testreport.cli",
)


def build_parser(families: Sequence[str] = FAMILIES) -> argparse.ArgumentParser:
    return _build(families)[0]


def _build(
    families: Sequence[str],
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:  # type: ignore[type-arg]
    parser = argparse.ArgumentParser(
        prog="torchsplit",
        description="Split device backends out of a PyTorch-style core: reorganise build "
        "lists (reorg) and find CUDA couplings inside files (scan).",
    )
    parser.add_argument("--version", action="version", version=f"torchsplit {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in families:
        importlib.import_module(module_name).register(subparsers)
    return parser, subparsers


def _parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The parser, with only the family a command names when it is the family's own name
    (``scan`` -> torchsplit.scan.cli): importing every family (audit, cache, reorg...)
    costs a quarter of a second, as much as scanning a small tree."""
    command = argv[0] if argv and not argv[0].startswith("-") else None
    module = f"torchsplit.{command}.cli"
    if command and module in FAMILIES:
        parser, subparsers = _build((module,))
        if command in subparsers.choices:
            return parser
    return build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser_for(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except TorchsplitError as exc:
        print(f"torchsplit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1
