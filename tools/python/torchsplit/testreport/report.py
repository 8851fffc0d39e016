"""Reads `bazel test --build_event_json_file` (one JSON object per line) and test.xml.

A test target "executed" when at least one of its runs (shards) was neither cached
locally nor a remote cache hit. Test cases are counted from every target's test.xml,
cached or not, so the closing line covers the whole suite.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from torchsplit.errors import TorchsplitError


@dataclass
class TargetResult:
    label: str
    seconds: float = 0.0
    executed: bool = False
    remote_hit: bool = False
    status: str = ""
    xml: list[Path] = field(default_factory=list)

    @property
    def how(self) -> str:
        if self.executed:
            return "executed"
        return "remote cache hit" if self.remote_hit else "cached locally"


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def line(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


def read_events(path: Path) -> dict[str, TargetResult]:
    """Test targets by label, from a build event JSON file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise TorchsplitError("build event file not found", str(path)) from exc
    targets: dict[str, TargetResult] = {}
    for line in lines:
        if not line.strip():
            continue
        event = json.loads(line)
        result = event.get("testResult")
        if result is not None:
            label = event["id"]["testResult"]["label"]
            target = targets.setdefault(label, TargetResult(label))
            info = result.get("executionInfo", {})
            cached = bool(result.get("cachedLocally")) or bool(info.get("cachedRemotely"))
            target.executed = target.executed or not cached
            target.remote_hit = target.remote_hit or bool(info.get("cachedRemotely"))
            target.seconds += int(result.get("testAttemptDurationMillis", 0)) / 1000
            for output in result.get("testActionOutput", []):
                if output.get("name") == "test.xml":
                    target.xml.append(Path(unquote(urlparse(output["uri"]).path)))
        summary = event.get("testSummary")
        if summary is not None:
            label = event["id"]["testSummary"]["label"]
            targets.setdefault(label, TargetResult(label)).status = summary.get("overallStatus", "")
    return targets


def count_cases(xml_files: list[Path]) -> Counts:
    """Test cases in JUnit XML files: failed (failure or error), skipped, else passed."""
    counts = Counts()
    for xml in xml_files:
        try:
            root = ET.parse(xml).getroot()
        except (FileNotFoundError, ET.ParseError):
            counts.failed += 1  # a test that wrote no readable report counts as one failure
            continue
        for case in root.iter("testcase"):
            tags = {child.tag for child in case}
            if tags & {"failure", "error"}:
                counts.failed += 1
            elif "skipped" in tags:
                counts.skipped += 1
            else:
                counts.passed += 1
    return counts


def slowest(targets: dict[str, TargetResult], limit: int = 10) -> list[str]:
    """The slowest test targets (time of their runs, shards summed), with how each ran."""
    ranked = sorted(targets.values(), key=lambda t: -t.seconds)[:limit]
    return [f"{t.seconds:8.1f} s  {t.label} ({t.how})" for t in ranked if t.status]


def uncovered(targets: dict[str, TargetResult], selection: dict[str, object]) -> list[str]:
    """Executed test targets that `torchsplit affected --json` did not select."""
    if selection.get("everything"):
        return []
    chosen = set(selection.get("tests", []))  # type: ignore[arg-type]
    return sorted(t.label for t in targets.values() if t.executed and t.label not in chosen)
