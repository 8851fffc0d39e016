"""`torchsplit test-report`: executed vs cached targets, the slowest, the closing line, and
the check that `torchsplit affected` selected every executed target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsplit.cli import main

XML = """<?xml version="1.0"?>
<testsuites><testsuite name="pytest">
<testcase classname="a" name="ok"/>
<testcase classname="a" name="bad"><failure message="x"/></testcase>
<testcase classname="a" name="skip"><skipped message="y"/></testcase>
<testcase classname="a" name="ok2"/>
</testsuite></testsuites>
"""


def _result(label: str, xml: Path, millis: int, **how: object) -> dict[str, object]:
    return {
        "id": {"testResult": {"label": label, "run": 1, "shard": 1, "attempt": 1}},
        "testResult": {
            "testActionOutput": [{"name": "test.xml", "uri": xml.as_uri()}],
            "testAttemptDurationMillis": str(millis),
            "status": "PASSED",
            **how,
        },
    }


def _summary(label: str) -> dict[str, object]:
    return {"id": {"testSummary": {"label": label}}, "testSummary": {"overallStatus": "PASSED"}}


@pytest.fixture
def events(tmp_path: Path) -> Path:
    xml = tmp_path / "test.xml"
    xml.write_text(XML)
    lines = [
        _result("//tests:slow", xml, 90_000, executionInfo={"strategy": "linux-sandbox"}),
        _result("//tests:remote", xml, 5_000, executionInfo={"cachedRemotely": True}),
        _result("//tests:local", xml, 1_000, cachedLocally=True),
        _summary("//tests:slow"),
        _summary("//tests:remote"),
        _summary("//tests:local"),
    ]
    path = tmp_path / "events.json"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def test_report_counts_cases_and_says_how_each_target_ran(
    events: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test-report", str(events)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "test targets: 3; executed 1, remote cache hit 1, cached locally 1"
    assert "      90.0 s  //tests:slow (executed)" in out
    assert "       5.0 s  //tests:remote (remote cache hit)" in out
    assert "       1.0 s  //tests:local (cached locally)" in out
    assert out[-1] == "6 passed, 3 failed, 3 skipped"


def test_an_executed_target_the_selection_missed_fails(
    events: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    selection = tmp_path / "affected.json"
    selection.write_text(json.dumps({"everything": [], "tests": ["//tests:remote"]}))
    assert main(["test-report", str(events), "--affected", str(selection)]) == 1
    assert "executed but not selected: //tests:slow" in capsys.readouterr().out
    selection.write_text(json.dumps({"everything": [], "tests": ["//tests:slow"]}))
    assert main(["test-report", str(events), "--affected", str(selection)]) == 0
    selection.write_text(json.dumps({"everything": ["WORKSPACE changed"], "tests": []}))
    assert main(["test-report", str(events), "--affected", str(selection)]) == 0
