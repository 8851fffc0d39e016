"""``torchsplit cache``: run the loopback remote cache and report hit rates.

torchsplit cache start|stop|status [--state-dir DIR] [--port N]
torchsplit cache stats BAZEL_LOG... | --exec-log LOG.json
torchsplit cache diff FIRST.json SECOND.json   (why SECOND's actions missed)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from torchsplit.cache.server import DEFAULT_PORT, CacheServer, default_state_dir
from torchsplit.cache.stats import (
    exec_log_stats,
    explain_misses,
    load_exec_log,
    parse_invocations,
)
from torchsplit.errors import TorchsplitError


def _say(message: str) -> None:
    print(f"tools/cache: {message}", file=sys.stderr)


def _server(args: argparse.Namespace) -> CacheServer:
    state = Path(args.state_dir) if args.state_dir else default_state_dir()
    return CacheServer(state, port=args.port, limit_rate=getattr(args, "limit_rate", None))


def _start(args: argparse.Namespace) -> int:
    _server(args).start(_say)
    return 0


def _stop(args: argparse.Namespace) -> int:
    _server(args).stop(_say)
    return 0


def _status(args: argparse.Namespace) -> int:
    server = _server(args)
    pid = server.pid()
    if pid is None:
        print(f"not running (state {server.state_dir})")
        return 1
    server.check()
    blobs, size = server.usage()
    print(f"running: pid {pid}, {server.url}, {blobs} blobs ({size / 1e6:.1f} MB)")
    print(f"blobs in {server.data_dir}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    if not args.exec_log and not args.logs:
        raise TorchsplitError("give Bazel log files or --exec-log")
    if args.exec_log:
        print(exec_log_stats(load_exec_log(args.exec_log)).sentence())
    # Per invocation: a sum over invocations is no hit rate (it once exceeded 100%).
    for log in args.logs:
        try:
            text = Path(log).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError as exc:
            raise TorchsplitError("Bazel log not found", log) from exc
        for name, stats in parse_invocations(text):
            print(f"{name}: {stats.sentence()}")
    return 0


def _diff(args: argparse.Namespace) -> int:
    first, second = load_exec_log(args.first), load_exec_log(args.second)
    print(exec_log_stats(second).sentence())
    for line in explain_misses(first, second, limit=args.limit):
        print(f"  miss: {line}")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "cache", help="the loopback remote cache (nginx WebDAV) and hit-rate reports"
    )
    sub = parser.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    for name, func, text in (
        ("start", _start, "start nginx serving Bazel's HTTP cache protocol (idempotent)"),
        ("stop", _stop, "stop it (by the pid in its state directory)"),
        ("status", _status, "is it running, and how much does it hold"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--state-dir", help="default: $TORCHSPLIT_CACHE_STATE or a per-user dir")
        p.add_argument("--port", type=int, default=DEFAULT_PORT, help="loopback port (8980)")
        if name == "start":
            p.add_argument("--limit-rate", help="nginx limit_rate per response, e.g. 20k (tests)")
        p.set_defaults(func=func)
    stats = sub.add_parser("stats", help="hit rate from Bazel logs or an execution log")
    stats.add_argument("logs", nargs="*", help="Bazel output (its INFO: N processes lines)")
    stats.add_argument("--exec-log", help="an --execution_log_json_file")
    stats.set_defaults(func=_stats)
    diff = sub.add_parser("diff", help="explain the second build's misses against the first")
    diff.add_argument("first", help="execution log of the build that filled the cache")
    diff.add_argument("second", help="execution log of the build that should have hit")
    diff.add_argument("--limit", type=int, default=20)
    diff.set_defaults(func=_diff)
