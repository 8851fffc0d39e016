"""`torchsplit upstream test-summary`: gtest cases counted from Bazel's test.xml files."""

from __future__ import annotations

from pathlib import Path

from torchsplit.cli import main

PASS_AND_SKIP = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="0" disabled="0" errors="0" name="AllTests">
  <testsuite name="ssizeTest" tests="3">
    <testcase name="size_t" status="run" result="completed" classname="ssizeTest" />
    <testcase name="int" status="run" result="completed" classname="ssizeTest" />
    <testcase name="on_32_bit" status="run" result="skipped" classname="ssizeTest">
      <skipped message="32-bit only"/>
    </testcase>
  </testsuite>
</testsuites>
"""

ONE_FAILS = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="1" name="AllTests">
  <testsuite name="Half" tests="2">
    <testcase name="Round" status="run" result="completed" classname="Half" />
    <testcase name="Overflow" status="run" result="completed" classname="Half">
      <failure message="Expected equality">at Half_test.cpp:12</failure>
    </testcase>
  </testsuite>
</testsuites>
"""


def _workspace(tmp_path: Path, reports: dict[str, str]) -> Path:
    ws = tmp_path / "ws"
    (ws / "c10/test").mkdir(parents=True)
    (ws / "c10/test/BUILD.bazel").write_text("")
    for target, xml in reports.items():
        log = ws / "bazel-testlogs/c10/test" / target
        log.mkdir(parents=True)
        (log / "test.xml").write_text(xml)
    return ws


def test_counts_name_the_targets_and_end_with_the_closing_line(tmp_path, capsys):
    ws = _workspace(tmp_path, {"util/ssize_test": PASS_AND_SKIP})
    assert main(["upstream", "test-summary", str(ws)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "//c10/test:util/ssize_test: 2 passed, 0 failed, 1 skipped",
        "c10: 1 skipped: ssizeTest.on_32_bit",
        "c10: 2 passed, 0 failed",
    ]


def test_a_failed_case_is_named_and_fails_the_command(tmp_path, capsys):
    ws = _workspace(tmp_path, {"util/ssize_test": PASS_AND_SKIP, "core_tests": ONE_FAILS})
    assert main(["upstream", "test-summary", str(ws)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "c10: FAILED Half.Overflow" in out
    assert out[-1] == "c10: 3 passed, 1 failed"


def test_no_logs_is_an_error(tmp_path, capsys):
    (tmp_path / "ws").mkdir()
    assert main(["upstream", "test-summary", str(tmp_path / "ws")]) == 2
    assert "no test logs for //c10 (run bazel test first)" in capsys.readouterr().err
