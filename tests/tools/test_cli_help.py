"""Every command-line entry point answers --help: exit 0, a usage line, nothing written."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.cli import build_parser

# bench/ modules that are libraries of the scripts, not commands.
BENCH_LIBRARIES = {"action_graph.py", "bazel_bench.py"}


def _subcommand_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from _subcommand_paths(sub, (*prefix, name))


TORCHSPLIT = [
    ("tools/torchsplit",),
    *(("tools/torchsplit", *p) for p in _subcommand_paths(build_parser())),
]
BENCH = sorted(p.name for p in (REPO / "bench").glob("*.py") if p.name not in BENCH_LIBRARIES)
SHELL = [("tools/dev",), ("tools/cache",), ("tools/cache-grpc",)]


def _help(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [*command, "--help"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", TORCHSPLIT + SHELL, ids=" ".join)
def test_tool_answers_help(command: tuple[str, ...], tmp_path: Path) -> None:
    proc = _help([str(REPO / command[0]), *command[1:]], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "usage" in (proc.stdout + proc.stderr).lower()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script", BENCH)
def test_bench_script_answers_help_and_writes_nothing(script: str, tmp_path: Path) -> None:
    proc = _help([sys.executable, str(REPO / "bench" / script)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:"), proc.stdout
    assert list(tmp_path.iterdir()) == [], "--help must not create anything"


def test_every_bench_script_is_covered() -> None:
    assert "gen_pytorch_tree.py" in BENCH and "bench_ops.py" in BENCH
