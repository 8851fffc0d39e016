"""``torchsplit audit``: check the layering policy against the Bazel graph (exit 1 on violations).

Exit codes: 0 clean, 1 violations, 2 Bazel itself failed (its error is printed)
or the policy cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from torchsplit.audit.auditor import Auditor
from torchsplit.audit.policy import DEFAULT_POLICY, load_policy
from torchsplit.bazel_run import Bazel, default_bazel
from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import write_output


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


def cmd_mutations(args: argparse.Namespace) -> int:
    from torchsplit.audit.mutations import MUTATIONS, render_first_lines, render_matrix, run_all

    workspace = _workspace(args.workspace)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.only and len(chosen) != len(set(args.only)):
        known = ", ".join(m.name for m in MUTATIONS)
        raise TorchsplitError(f"unknown mutation in {args.only}; known: {known}")
    results, stale = run_all(
        workspace,
        tuple(chosen),
        bazel=args.bazel,
        log=lambda m: print(m, flush=True),
        stale=args.stale,
    )
    matrix = render_matrix(results)
    sys.stdout.write("\n" + matrix + "\n" + render_first_lines(results))
    problems = [p for r in results for p in r.problems] + (stale.problems if stale else [])
    for problem in problems:
        print(f"torchsplit audit-mutations: {problem}", file=sys.stderr)
    if args.markdown:
        write_output(args.markdown, matrix)
    return 1 if problems else 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "audit",
        help="find dependencies the layering policy forbids, explained hop by hop",
        description="For every forbidden (from, to) pair of tools/layering/policy.bzl, run "
        "`bazel query` somepath/allpaths and `visible()` (then `cquery` on a violation), check "
        "each layer's external repositories, and check what needs no build edge: core's Python "
        "imports and loaders, C/C++ dlopen and includes, BUILD-file flags, and the built "
        "artifacts (DT_NEEDED, vendor symbols and strings). "
        "Exit 0 clean, 1 on any violation, 2 when Bazel fails.",
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

    m = subparsers.add_parser(
        "audit-mutations",
        help="inject layering violations in a temporary copy; print which layer catches each",
        description="Copy the checkout to a temporary directory (one Bazel output base), inject "
        "one violation at a time and run every enforcement layer on it. Prints the violation x "
        "mechanism matrix and the first line each mechanism printed; exit 1 when a violation is "
        "caught by fewer than two mechanisms (unless the case says why only one can) or a "
        "mechanism misses its expected message.",
    )
    m.add_argument("--workspace", help="the checkout to copy (default: the one around .)")
    m.add_argument("--bazel", help="Bazel launcher (default: the copy's tools/bazel)")
    m.add_argument("--only", action="append", help="run just this mutation (repeatable)")
    m.add_argument("--markdown", help="also write the matrix (Markdown) to this file")
    m.add_argument(
        "--stale",
        action="store_true",
        help="then the stale-artifact case: build a core library, remove it, rebuild, audit",
    )
    m.set_defaults(func=cmd_mutations)
