"""``torchsplit upstream``: real PyTorch under the split.

torchsplit upstream fetch [--version V] [--tarball FILE]
torchsplit upstream restructure [--version V | --source-tree DIR] --out DIR [--force]
torchsplit upstream test-summary TESTLOGS [--label c10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.upstream import fetch, restructure, testlogs, versions


def _say(message: str) -> None:
    print(f"torchsplit upstream: {message}", file=sys.stderr, flush=True)


def cmd_fetch(args: argparse.Namespace) -> int:
    pin = versions.pin_for(args.version)
    tarball = Path(args.tarball) if args.tarball else None
    tree = fetch.fetch(pin, tarball=tarball, say=_say)
    print(tree)
    return 0


def cmd_restructure(args: argparse.Namespace) -> int:
    if args.source_tree:
        tree = Path(args.source_tree)
        label, version = f"PyTorch source tree {tree.name}", ""
        stamp = fetch.read_stamp(tree)
        if stamp:  # a fetched tree: its version picks the patches to apply
            version = str(stamp.get("version", ""))
            label = f"PyTorch {version} ({stamp.get('tarball')}, sha256 {stamp.get('sha256')})"
    else:
        pin = versions.pin_for(args.version)
        if not fetch.fetched(pin):
            raise TorchsplitError(
                f"PyTorch {pin.version} is not fetched: run `torchsplit upstream fetch "
                f"--version {pin.version}` first (or give --source-tree)"
            )
        tree = fetch.tree_dir(pin)
        label = f"PyTorch {pin.version} ({pin.tarball}, sha256 {pin.sha256})"
        version = pin.version
    out = Path(args.out)
    summary = restructure.restructure(
        tree, out, label=label, version=version, force=args.force, say=_say
    )
    print(f"restructured {summary.files} files into {out.resolve()}")
    print(
        f"moved {summary.moved} files ({summary.followed} headers and directory files "
        f"followed their sources); {summary.left_behind} headers left for a human "
        "(torchsplit/headers_left.tsv)"
    )
    print(f"torch_patches applied: {', '.join(summary.patches) or 'none'}")
    print(f"superseded upstream Bazel files removed: {', '.join(summary.superseded) or 'none'}")
    for commit, subject in summary.commits:
        print(f"  {commit} {subject}")
    targets = "//c10/... //third_device/torch_cuda:c10_cuda"
    print(f"next: cd {out.resolve()} && tools/bazel build {targets}")
    return 0


def cmd_test_summary(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace)
    counts = testlogs.summarize(workspace, args.package)
    text, ok = testlogs.render(args.label or args.package.split("/")[0], counts)
    sys.stdout.write(text)
    return 0 if ok else 1


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    upstream = subparsers.add_parser(
        "upstream",
        help="fetch real PyTorch sources and restructure them under the split",
        description="Real PyTorch under the split: fetch Debian's PyTorch source package, "
        "restructure it into a git repository laid out as the RFC proposes, summarise tests.",
    )
    sub = upstream.add_subparsers(dest="upstream_command", required=True, metavar="COMMAND")

    known = ", ".join(sorted(versions.PINS))
    p = sub.add_parser(
        "fetch",
        help="download, check and unpack a pinned PyTorch source tree (idempotent)",
        description="apt-get source --download-only the pinned Debian source package (adding "
        "the deb-src entry if missing), check its sha256, unpack it into "
        "~/.cache/torchsplit/upstream/<version>/ ($TORCHSPLIT_UPSTREAM_CACHE). Prints the "
        "tree's path.",
    )
    p.add_argument("--version", default=versions.DEFAULT_VERSION, help=f"one of: {known}")
    p.add_argument(
        "--tarball",
        help="use this local copy of the orig tarball (checked against the pin) instead of apt",
    )
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser(
        "restructure",
        help="make a git repository of a real PyTorch tree laid out as the RFC proposes",
        description="Copy a PyTorch source tree into a new git repository and commit: the "
        "tree as released; the move plan (git mv only); the torch_patches; the Bazel overlay "
        "(post-move targets, c10 and c10/cuda compiled, the layering policy). --out is "
        "replaced atomically; a directory torchsplit did not write is refused without --force.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "--version", default=versions.DEFAULT_VERSION, help=f"a fetched version: {known}"
    )
    source.add_argument("--source-tree", help="a PyTorch source tree (instead of --version)")
    p.add_argument("--out", required=True, help="the repository to write (replaced as a whole)")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace --out even when torchsplit did not write it or it has changes",
    )
    p.set_defaults(func=cmd_restructure)

    p = sub.add_parser(
        "test-summary",
        help="count the gtest cases of a package's Bazel tests (passed, failed, skipped)",
        description="Read bazel-testlogs/<package>/**/test.xml (googletest's reports) and print "
        "per-target counts and the closing line '<label>: N passed, M failed'. Exit 1 when a "
        "case failed or none ran.",
    )
    p.add_argument("workspace", help="the Bazel workspace (its bazel-testlogs)")
    p.add_argument("--package", default="c10", help="package directory whose tests to count")
    p.add_argument("--label", help="the closing line's label (default: the package's top)")
    p.set_defaults(func=cmd_test_summary)
