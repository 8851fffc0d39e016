"""``torchsplit reorg``: evaluate / classify / emit / report / check."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import write_output, write_tree
from torchsplit.reorg import emit, moves, selfcheck, workspace
from torchsplit.reorg.classify import Classification, classify, expand_globs
from torchsplit.reorg.rules import RuleSet, load_rules
from torchsplit.reorg.starlark_eval import Evaluation, evaluate


def _config_value(text: str) -> tuple[tuple[str, str], str]:
    key, sep, value = text.partition("=")
    section, dot, name = key.partition(".")
    if not sep or not dot or not section or not name:
        raise argparse.ArgumentTypeError(f"expected section.key=value, got {text!r}")
    return (section, name), value


def _add_input(parser: argparse.ArgumentParser, *, positional: bool = True) -> None:
    if positional:
        parser.add_argument("build_variables", help="a PyTorch-style build_variables.bzl")
    parser.add_argument(
        "--config-value",
        action="append",
        type=_config_value,
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="value returned by the native.read_config stub (default: the call's default)",
    )
    parser.add_argument(
        "--glob-root",
        help="directory in which the native.glob stub expands patterns (default: returns [])",
    )


def _add_rules(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", help="rules TOML (default: the packaged upstream PyTorch rules)")
    tree = parser.add_mutually_exclusive_group()
    tree.add_argument(
        "--source-tree",
        help="PyTorch checkout: flags listed sources it lacks, and places the files upstream "
        "finds by glob (ATen's .cu kernels, c10/cuda, ...)",
    )
    tree.add_argument(
        "--file-list",
        help="file with one repository-relative path per line, standing in for --source-tree "
        "(places globbed files; checks nothing exists)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when anything is flagged; an input with no lists is an error",
    )


def _evaluate(args: argparse.Namespace, path: str) -> Evaluation:
    return evaluate(path, config_values=dict(args.config_value), glob_root=args.glob_root)


def _tree_files(args: argparse.Namespace) -> list[str] | None:
    """Repository-relative files of --source-tree or --file-list; None when neither."""
    if args.source_tree is not None:
        root = Path(args.source_tree)
        if not root.is_dir():
            raise TorchsplitError("no such directory (--source-tree)", path=args.source_tree)
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    if args.file_list is not None:
        try:
            text = Path(args.file_list).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise TorchsplitError(f"cannot read the file list: {reason}", args.file_list) from exc
        return sorted({line.strip() for line in text.splitlines() if line.strip()})
    return None


def _classify(
    args: argparse.Namespace, path: str
) -> tuple[Evaluation, RuleSet, Classification, list[str] | None]:
    evaluation = _evaluate(args, path)
    if not evaluation.lists:
        message = f"{path}: defines no list of strings; nothing to place"
        if args.strict:
            raise TorchsplitError("defines no list of strings; nothing to place", path=path)
        print(f"torchsplit: warning: {message}", file=sys.stderr)
    ruleset = load_rules(args.rules)
    # The rules may name more input files (each backend's own build_variables.bzl).
    for extra in ruleset.input_files(path):
        evaluation.merge(_evaluate(args, str(extra)))
    files = _tree_files(args)
    unexpanded: list[str] = []
    if files is None:
        unexpanded = [g.list_name for g in ruleset.globs]
    else:
        expand_globs(evaluation, ruleset, files)
    result = classify(
        evaluation, ruleset, source_tree=args.source_tree, unexpanded_globs=unexpanded
    )
    return evaluation, ruleset, result, files


def _write_or_print(text: str, output: str | None) -> None:
    if output and output != "-":
        write_output(output, text)
    else:
        sys.stdout.write(text)


def cmd_evaluate(args: argparse.Namespace) -> int:
    evaluation = _evaluate(args, args.build_variables)
    if args.format == "json":
        data = {
            "input": Path(evaluation.path).name,
            "lists": evaluation.lists,
            "lines": evaluation.list_lines,
            "skipped_functions": evaluation.skipped_functions,
            "stub_calls": [c.__dict__ for c in evaluation.stub_calls],
        }
        _write_or_print(json.dumps(data, indent=2) + "\n", args.output)
        return 0
    out = [
        f"{evaluation.path}: {len(evaluation.lists)} lists, "
        f"{len({s for v in evaluation.lists.values() for s in v})} distinct entries\n"
    ]
    for name, values in evaluation.lists.items():
        out.append(f"  {evaluation.list_lines[name]:5d}  {name}: {len(values)}\n")
    for name, why in evaluation.skipped_functions.items():
        out.append(f"  skipped function {name}: {why}\n")
    for call in evaluation.stub_calls:
        out.append(f"  stub {call.function}({call.arguments}) -> {call.result}\n")
    _write_or_print("".join(out), args.output)
    return 0


def cmd_classify(args: argparse.Namespace) -> int:
    _, _, result, _ = _classify(args, args.build_variables)
    if args.format == "json":
        rows = [d.__dict__ for d in (result.decisions[s] for s in sorted(result.decisions))]
        _write_or_print(json.dumps(rows, indent=2) + "\n", args.output)
    else:
        out = [
            f"{d.source}\t{d.target}\t{d.rule}\t{d.reason}\n"
            for d in (result.decisions[s] for s in sorted(result.decisions))
        ]
        out.extend(f"flag {f.kind}: {f.subject}: {f.message}\n" for f in result.flags)
        _write_or_print("".join(out), args.output)
    return 1 if args.strict and result.flags else 0


def _render(args: argparse.Namespace) -> tuple[RuleSet, Classification, dict[str, str]]:
    evaluation, ruleset, result, tree = _classify(args, args.build_variables)
    files = emit.render_all(result, evaluation, ruleset, bzl_name=args.bzl_name)
    after = emit.render_moved_overlay(
        result, ruleset, moves.plan(result, ruleset, tree), bzl_name=args.bzl_name
    )
    files.update(
        moves.render_plan(
            result, ruleset, include_tree=args.include_tree, files=tree, overlay=after
        )
    )
    return ruleset, result, files


def _summary(result: Classification, files: dict[str, str], out_dir: Path) -> None:
    for label, sources in result.by_target().items():
        print(f"{label}: {len(sources)}")
    print(f"flags: {len(result.flags)}; wrote {len(files)} files under {out_dir}")


def cmd_emit(args: argparse.Namespace) -> int:
    _, result, files = _render(args)
    out_dir = Path(args.out)
    write_tree(out_dir, files, executable=[moves.SCRIPT], force=args.force)
    _summary(result, files, out_dir)
    return 1 if args.strict and result.flags else 0


def cmd_workspace(args: argparse.Namespace) -> int:
    ruleset, result, emitted = _render(args)
    files = workspace.render_workspace(result, ruleset, emitted)
    out_dir = Path(args.out)
    write_tree(
        out_dir,
        files,
        executable=[*workspace.EXECUTABLE, f"torchsplit/{moves.SCRIPT}"],
        force=args.force,
    )
    _summary(result, files, out_dir)
    # Commands that run as printed: the workspace has no tools/ of its own.
    repo = workspace.REPO
    bazel, cli, where = (
        repo / "node_modules/.bin/bazelisk",
        repo / "tools/torchsplit",
        out_dir.resolve(),
    )
    print(f"report: {where / 'torchsplit' / 'report.md'} (before/after table, needs a human)")
    print(f"next: (cd {where} && {bazel} build --nobuild //...) && {cli} audit --workspace {where}")
    return 1 if args.strict and result.flags else 0


def cmd_report(args: argparse.Namespace) -> int:
    evaluation, ruleset, result, _ = _classify(args, args.build_variables)
    data = emit.report_data(result, evaluation, ruleset)
    text = emit.render_json(data) if args.format == "json" else emit.render_markdown(data)
    _write_or_print(text, args.output)
    return 1 if args.strict and result.flags else 0


def cmd_check(args: argparse.Namespace) -> int:
    _, ruleset, result, _ = _classify(args, args.build_variables)
    # Out-of-scope entries are built by no target: nothing to compare them with.
    excluded = {t.label for t in ruleset.targets.values() if t.kind == "excluded"}
    moved = selfcheck.read_moves(args.moves) if args.moves else {}
    if args.bazel_query_output is not None:
        if args.bazel_query_output == "-":
            text, where = sys.stdin.read(), "<stdin>"
        else:
            where = args.bazel_query_output
            try:
                text = Path(where).read_text(encoding="utf-8")
            except FileNotFoundError as exc:
                raise TorchsplitError("query output file not found", where) from exc
        actual = selfcheck.parse_query_output(text, where)
    else:
        workspace = args.workspace or str(Path(args.build_variables).resolve().parent)
        # A target nothing is classified to, in a package that does not exist
        # (a backend not written yet), has nothing to compare.
        classified = result.by_target()
        targets = [
            t.label
            for t in ruleset.targets.values()
            if t.label not in excluded
            and (classified.get(t.label) or selfcheck.package_exists(t.label, workspace))
        ]
        actual = selfcheck.run_bazel_query(args.bazel, targets, workspace)
    suffixes = tuple(s if s.startswith(".") else f".{s}" for s in args.suffixes.split(","))
    check = selfcheck.compare(result, actual, suffixes, moved=moved, excluded=excluded)
    sys.stdout.write(check.render())
    return 0 if check.ok else 1


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    reorg = subparsers.add_parser(
        "reorg",
        help="reorganise a build_variables.bzl into per-device targets",
        description="Evaluate a PyTorch-style build_variables.bzl, give every source one "
        "destination target, emit the split lists, a BUILD overlay and reports.",
    )
    sub = reorg.add_subparsers(dest="reorg_command", required=True, metavar="COMMAND")

    p = sub.add_parser("evaluate", help="list the source lists the file defines")
    _add_input(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-o", "--output", help="write here (atomically) instead of stdout")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("classify", help="print every source's destination and deciding rule")
    _add_input(p)
    _add_rules(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_classify)

    for name, func, text in (
        ("emit", cmd_emit, "write split .bzl, BUILD overlay, move plan and reports to --out"),
        (
            "workspace",
            cmd_workspace,
            "write a PyTorch-shaped Bazel workspace (placeholders, overlay, layering policy, "
            "rule stand-ins) to --out",
        ),
    ):
        p = sub.add_parser(name, help=text, description=text)
        _add_input(p)
        _add_rules(p)
        p.add_argument("--out", required=True, help="output directory (replaced as a whole)")
        p.add_argument(
            "--force",
            action="store_true",
            help="replace --out even when torchsplit did not write it, or files were added",
        )
        p.add_argument("--bzl-name", default=emit.GENERATED_BZL)
        p.add_argument(
            "--include-tree",
            help="header tree (e.g. the torch wheel's include/) to list the core files that "
            "include a moving header",
        )
        p.set_defaults(func=func)

    p = sub.add_parser("report", help="Markdown or JSON report of counts, decisions, flags")
    _add_input(p)
    _add_rules(p)
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "check",
        help="compare the classification with what the BUILD files compile (exit 1 on mismatch)",
    )
    p.add_argument("--build-variables", required=True)
    _add_input(p, positional=False)
    _add_rules(p)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--bazel-query-output",
        metavar="FILE",
        help="recorded per-target `labels(srcs, T)` output ('# target: T' sections or JSON); "
        "'-' reads stdin",
    )
    source.add_argument("--bazel", help="Bazel binary to run `bazel query` with, per target")
    p.add_argument("--workspace", help="where to run bazel (default: the .bzl's directory)")
    p.add_argument(
        "--moves",
        help="moves.tsv of a move plan carried out in the workspace: compare the files at "
        "their new paths",
    )
    p.add_argument(
        "--suffixes",
        default=",".join(selfcheck.DEFAULT_SUFFIXES),
        help="only compare files with these suffixes (comma-separated)",
    )
    p.set_defaults(func=cmd_check)
