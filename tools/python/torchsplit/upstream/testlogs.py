"""Counting gtest cases from Bazel's test logs: ``bazel-testlogs/<package>/**/test.xml``.

Bazel gives every test the path of an XML report (``XML_OUTPUT_FILE``), which googletest
writes: one ``<testcase>`` per case, with a ``<failure>`` child when it failed and
``result="skipped"`` when it called GTEST_SKIP. A test target that crashed before
writing its report still leaves Bazel's own ``test.xml`` (one ``<testcase>`` for the
target, with a ``<failure>``): it counts as failed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from torchsplit.errors import TorchsplitError


@dataclass
class TargetCount:
    target: str
    passed: int = 0
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def read_report(path: Path, target: str) -> TargetCount:
    count = TargetCount(target)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise TorchsplitError(f"cannot read the test report: {exc}", str(path)) from exc
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}.{case.get('name', '')}".strip(".")
        if case.find("failure") is not None or case.find("error") is not None:
            count.failed.append(name)
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            count.skipped.append(name)
        elif case.get("status", "run") == "run":
            count.passed += 1
        else:  # status="notrun": a DISABLED_ test
            count.skipped.append(name)
    return count


def summarize(workspace: Path, package: str) -> list[TargetCount]:
    """Every test target under ``package`` with a report in the workspace's
    ``bazel-testlogs``, sorted."""
    testlogs = workspace / "bazel-testlogs"
    base = testlogs / package
    if not base.is_dir():
        raise TorchsplitError(f"no test logs for //{package} (run bazel test first)", str(base))
    out = []
    for xml in sorted(base.rglob("test.xml")):
        rel = xml.parent.relative_to(testlogs).as_posix()
        # The package is the nearest directory with a BUILD file: a target named
        # "util/bit_cast_test" leaves its logs in a subdirectory of its package.
        pkg, name = rel, ""
        while pkg and not any((workspace / pkg / b).is_file() for b in ("BUILD.bazel", "BUILD")):
            pkg, _, head = pkg.rpartition("/")
            name = f"{head}/{name}" if name else head
        out.append(read_report(xml, f"//{pkg}:{name}"))
    return out


def render(label: str, counts: list[TargetCount]) -> tuple[str, bool]:
    """Per-target lines, the skipped and failed cases by name, and the closing line
    ``<label>: N passed, M failed``. The bool is True when all is well (cases ran, none
    failed)."""
    lines = []
    for c in counts:
        extra = f", {len(c.skipped)} skipped" if c.skipped else ""
        lines.append(f"{c.target}: {c.passed} passed, {len(c.failed)} failed{extra}")
    skipped = [s for c in counts for s in c.skipped]
    failed = [f for c in counts for f in c.failed]
    passed = sum(c.passed for c in counts)
    if skipped:
        lines.append(f"{label}: {len(skipped)} skipped: {', '.join(skipped)}")
    lines.extend(f"{label}: FAILED {name}" for name in failed)
    lines.append(f"{label}: {passed} passed, {len(failed)} failed")
    return "\n".join(lines) + "\n", passed > 0 and not failed
