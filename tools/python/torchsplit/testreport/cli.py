"""torchsplit test-report BEP.json [--affected AFFECTED.json]: what `bazel test` ran.

Prints the executed and cached targets, the 10 slowest with how each ran, and ends with
"N passed, M failed, K skipped" from the test.xml files. With --affected, exits 1 when a
test target was executed that the selection did not cover (.ci/run's check).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.testreport.report import count_cases, read_events, slowest, uncovered


def _report(args: argparse.Namespace) -> int:
    targets = read_events(Path(args.events))
    ran = [t for t in targets.values() if t.status]
    executed = sorted(t.label for t in ran if t.executed)
    remote = sum(1 for t in ran if not t.executed and t.remote_hit)
    print(
        f"test targets: {len(ran)}; executed {len(executed)}, remote cache hit {remote}, "
        f"cached locally {len(ran) - len(executed) - remote}"
    )
    for label in executed:
        print(f"  executed: {label}")
    print("slowest test targets:")
    for line in slowest(targets):
        print(f"  {line}")
    rc = 0
    if args.affected:
        try:
            selection = json.loads(Path(args.affected).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise TorchsplitError("cannot read the affected selection", args.affected) from exc
        missing = uncovered(targets, selection)
        if missing:
            rc = 1
            print("affected: MISMATCH: executed but not selected: " + ", ".join(missing))
        else:
            print(f"affected: the selection covers all {len(executed)} executed test targets")
    print(count_cases([x for t in ran for x in t.xml]).line())
    return rc


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "test-report",
        help="summarise a bazel test run from its build event file",
        description=__doc__,
    )
    p.add_argument("events", help="the file of bazel test --build_event_json_file")
    p.add_argument("--affected", help="torchsplit affected --json output to check against")
    p.set_defaults(func=_report)
