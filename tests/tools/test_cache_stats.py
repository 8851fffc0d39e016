"""Hit-rate parsing (Bazel summary lines, execution logs) and the cache server's config."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from torchsplit.cache.server import CacheServer
from torchsplit.cache.stats import (
    exec_log_stats,
    explain_misses,
    iter_json_stream,
    load_exec_log,
    parse_invocations,
    parse_summary,
)
from torchsplit.cli import main
from torchsplit.errors import TorchsplitError

BUILD_LOG = """\
INFO: Analyzed 19 targets (29 packages loaded, 2309 targets configured).
INFO: Elapsed time: 24.907s, Critical Path: 7.92s
INFO: 57 processes: 21 remote cache hit, 33 internal, 3 linux-sandbox.
INFO: Build completed successfully, 57 total actions
"""
TEST_LOG = "INFO: 3 processes: 1 internal, 2 linux-sandbox.\n"


def test_summary_line_gives_hits_over_non_internal_processes() -> None:
    stats = parse_summary(BUILD_LOG)
    assert (stats.total, stats.hits, stats.cacheable) == (57, 21, 24)
    assert stats.sentence() == "remote cache: 21/24 cacheable actions hit (88%)"


def test_several_commands_add_up_and_warnings_are_counted() -> None:
    warned = "WARNING: Reading from Remote Cache:\nBulkTransferException\n"
    stats = parse_summary(BUILD_LOG + warned + TEST_LOG)
    assert (stats.hits, stats.cacheable, stats.warnings) == (21, 26, 1)
    assert stats.sentence().endswith("(81%); 1 cache warning(s): the cache failed some requests")


@pytest.mark.parametrize(
    ("line", "hits", "cacheable"),
    [
        ("INFO: 0 processes.", 0, 0),
        ("INFO: 1 process: 1 internal.", 0, 0),
        ("INFO: 4 processes: 4 remote cache hit.", 4, 4),
        ("INFO: 6 processes: 4 remote cache hit, 1 internal, 1 local.", 4, 5),
    ],
)
def test_summary_variants(line: str, hits: int, cacheable: int) -> None:
    stats = parse_summary(line + "\n")
    assert (stats.hits, stats.cacheable) == (hits, cacheable)


def test_nothing_executed_is_said_plainly() -> None:
    assert parse_summary("INFO: 0 processes.\n").sentence().endswith("up to date locally)")


def test_a_log_without_summary_is_an_error() -> None:
    with pytest.raises(TorchsplitError, match="INFO: N processes"):
        parse_summary("ERROR: build interrupted\n")


def _spawn(output: str, hit: bool, arg: str = "-O1", digest: str = "aa") -> dict[str, object]:
    return {
        "commandArgs": ["gcc", arg, "-o", output],
        "environmentVariables": [{"name": "PATH", "value": "/bin:/usr/bin"}],
        "inputs": [{"path": "core/a.cc", "digest": {"hash": digest, "sizeBytes": "1"}}],
        "listedOutputs": [output],
        "remoteCacheable": True,
        "remoteCacheHit": hit,
        "mnemonic": "CppCompile",
        "actualOutputs": [{"path": output, "digest": {"hash": "bb", "sizeBytes": "1"}}],
    }


def test_execution_log_stream_and_miss_explanations(tmp_path: Path) -> None:
    first = tmp_path / "first.json"
    second = tmp_path / "second.json"
    # Bazel writes pretty-printed objects one after another: not JSON lines.
    first.write_text(json.dumps(_spawn("a.o", False), indent=2) + json.dumps(_spawn("b.o", False)))
    second.write_text(
        json.dumps(_spawn("a.o", True), indent=1)
        + json.dumps(_spawn("b.o", False, digest="cc"))
        + json.dumps(_spawn("c.o", False, arg="-O2"))
    )
    assert len(list(iter_json_stream(first.read_text()))) == 2
    stats = exec_log_stats(load_exec_log(second))
    assert (stats.hits, stats.cacheable) == (1, 3)
    lines = explain_misses(load_exec_log(first), load_exec_log(second))
    assert lines == [
        "CppCompile b.o: 1 input(s) differ: core/a.cc",
        "CppCompile c.o: not in the first build",
    ]


def test_cli_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "bazel.log"
    log.write_text(BUILD_LOG)
    assert main(["cache", "stats", str(log)]) == 0
    assert (
        capsys.readouterr().out == "invocation 1: remote cache: 21/24 cacheable actions hit (88%)\n"
    )


def test_each_invocation_has_its_own_rate_never_over_100_percent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A build, then a test whose every process hit: summed, 95 hits over 93 cacheable
    # processes would read 102%; per invocation each rate is its own.
    log = tmp_path / "bazel.log"
    log.write_text(
        "torchsplit: bazel build //...\n"
        "INFO: 120 processes: 2 remote cache hit, 25 internal, 93 linux-sandbox.\n"
        "torchsplit: bazel test //...\n"
        "INFO: 93 processes: 93 remote cache hit.\n"
    )
    assert main(["cache", "stats", str(log)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "build //...: remote cache: 2/95 cacheable actions hit (2%)",
        "test //...: remote cache: 93/93 cacheable actions hit (100%)",
    ]
    for _, stats in parse_invocations(log.read_text()):
        assert stats.hits <= stats.cacheable


def test_config_serves_the_http_cache_protocol_on_loopback() -> None:
    server = CacheServer(Path("/state"), port=9999, limit_rate="20k")
    conf = server.render_conf("nobody")
    assert "listen 127.0.0.1:9999;" in conf
    assert "dav_methods PUT;" in conf and "create_full_put_path on;" in conf
    assert "root /state/data;" in conf and "limit_rate 20k;" in conf
    assert conf.startswith("# Generated") and "\nuser nobody " in conf
    assert "user " not in server.render_conf(None)


@pytest.mark.bazel
@pytest.mark.skipif(os.geteuid() != 0, reason="the worker-user trap exists only when run as root")
def test_cache_dir_not_writable_by_workers_fails_the_health_check() -> None:
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        pytest.skip("nginx is not installed (tools/cache start installs it)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    state = Path(tempfile.mkdtemp(prefix="torchsplit-cache-state-"))
    server = CacheServer(state, port=port)
    try:
        server.start()
        os.chown(server.data_dir / "cas", 0, 0)  # the trap: root-owned, workers are nobody
        with pytest.raises(TorchsplitError, match="refuses uploads"):
            server.check(timeout=2)
    finally:
        server.stop()
        shutil.rmtree(state, ignore_errors=True)
