"""``torchsplit audit``: check the layering policy against the Bazel graph (exit 1 on violations).

Exit codes: 0 clean, 1 violations, 2 Bazel itself failed (its error is printed)
or the policy cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from torchsplit.audit import Auditor
from torchsplit.bazel_run import Bazel, default_bazel
from torchsplit.errors import TorchsplitError
from torchsplit.layering_policy import DEFAULT_POLICY, load_policy


def _workspace(arg: str | None) -> Path:
    start = Path(arg or ".").resolve()
    for candidate in (start, *start.parents):
        if (candidate / "WORKSPACE").exists() or (candidate / "MODULE.bazel").exists():
            return candidate
    raise TorchsplitError("not inside a Bazel workspace (no WORKSPACE above)", str(start))


def cmd_audit(args: argparse.Namespace) -> int:
    workspace = _workspace(args.workspace)
    policy = load_policy(workspace / (args.policy or DEFAULT_POLICY))
    policy.path = args.policy or DEFAULT_POLICY
    bazel = Bazel(
        workspace=workspace,
        command=[args.bazel or default_bazel(workspace)],
        startup=[f"--output_base={args.output_base}"] if args.output_base else [],
    )
    result = Auditor(policy, bazel, list(args.cquery_flag), headers=not args.no_headers).run()
    if args.json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(result.render())
    return 0 if result.ok else 1


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "audit",
        help="find dependencies the layering policy forbids, explained hop by hop",
        description="For every forbidden (from, to) pair of tools/layering/policy.bzl, run "
        "`bazel query`/`cquery` somepath/allpaths and `visible()`, and scan the from-side's "
        "sources for forbidden includes. Exit 0 clean, 1 on any violation, 2 when Bazel fails.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable report (for CI)")
    p.add_argument("--workspace", help="the Bazel workspace (default: the one around .)")
    p.add_argument("--policy", help=f"policy file, workspace-relative (default {DEFAULT_POLICY})")
    p.add_argument("--bazel", help="Bazel launcher (default: the workspace's tools/bazel)")
    p.add_argument("--output-base", help="Bazel --output_base (a separate server)")
    p.add_argument(
        "--cquery-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="flag for the configured check, repeatable (e.g. --cquery-flag=--config=cuda)",
    )
    p.add_argument("--no-headers", action="store_true", help="skip the include scan")
    p.set_defaults(func=cmd_audit)
