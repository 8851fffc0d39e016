"""Build-performance benchmarks, one command: python3 bench/run_all.py [--only KEYS] [--tiny]

Sections (SECTIONS, in document order; --only takes keys or numbers):
1. cold: cold build of //core/... (no CUDA) vs //... (everything): wall time, actions
2. remote: a clean clone elsewhere ("another machine") against a warm remote cache vs cold
3. isolation: touch one file per area, count executed actions against the strict set
   of actions depending on it (aquery)
4. query: analysis / query / audit time on this repo and on a synthetic PyTorch-scale tree
5. toolkit: a CUDA toolkit switch re-runs torch_cuda alone (bench/bench_toolkit.py)
6. ops: op timings of the release wheels against NumPy and PyTorch (bench/bench_ops.py)

Works on fresh clones of HEAD (commit first), each with its own output root, and a
private nginx cache. Prints the tables and writes docs/benchmarks.md. Asserts nothing.
A section that fails is reported in the document (and the exit status is 1); the
others still run. --tiny runs only the sections that have a small variant, on small
inputs (tests/tools/test_bench_harness.py runs it so the harness cannot rot).
Other benchmarks join by adding a Section to SECTIONS.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_toolkit
from action_graph import dependents, parse_aquery
from bazel_bench import REPO, Checkout, clone, machine

from torchsplit.cache.server import CacheServer
from torchsplit.cache.stats import exec_log_stats, explain_misses, load_exec_log
from torchsplit.errors import TorchsplitError
from torchsplit.fsutil import write_output

CI = ["--config=ci"]
NOTES: dict[int, str] = {
    1: (
        "Each after `bazel clean --expunge` with the server up: loading, local repositori"
        "es, analysis and every action. *Processes spawned*: the non-internal ones (compi"
        "les, nvcc, archives, links).\n"
    ),
    2: (
        "Clone A fills a private nginx cache; clone B sits in another directory with its "
        "own output root, `HOME` and `PATH`, and reaches the virtualenv and the CUDA tool"
        "kit through other paths. Hits counted from the execution logs.\n"
    ),
    3: (
        "One edit at a time on a built clone, no remote cache. *Executed*: processes run "
        "by the rebuild. *Strict set*: spawned actions that read the file, directly or th"
        "rough other actions' outputs, by aquery's declared inputs. Bazel runs fewer: C++"
        " compiles depend on the headers they actually include (`.d` files), and an uncha"
        "nged output stops propagation (a header comment leaves objects identical: no rel"
        "ink). A core `.cc` edit relinks the backends' extensions (they link `libtorch_co"
        "re.so`) but runs no nvcc; torch_cuda and torch_emu edits run no core action.\n"
    ),
    4: (
        "A fresh server per workspace. Audit query: `deps(//core/...) intersect (//third_"
        "device/... + @local_cuda//...)` (synthetic tree: `//third_device/...`); its resu"
        "lt must be empty. The synthetic tree is `bench/gen_pytorch_tree.py`'s: upstream'"
        "s list names and counts, BUILD overlay from `torchsplit reorg workspace`. The `torchs"
        "plit audit` column: the whole CLI in the clone, cold (its own Bazel server star"
        "ts, loads, analyses and reads the built artifacts it finds) and warm (best of tw"
        "o more runs; `bench/bench_audit.py` times it on this checkout).\n"
    ),
    5: (
        "`python3 bench/bench_ops.py`: the torch_core release wheel of dist/ (`tools/dev "
        "wheels`, -c opt) installed in a temporary virtualenv, timed against NumPy and "
        "PyTorch's CPU wheel in the same process, every library on one thread; each op "
        "in each library in turn per round, best of 25 rounds. Ratios above 1 mean "
        "torch_core is slower (issue 26's target: within 2.0x of PyTorch). "
        "docs/cpu-kernels.md describes the kernels.\n"
    ),
}
CC = (".cc", ".cpp")
Table = list[list[str]]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def table(header: list[str], rows: Table) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def bench_cold(work: Path) -> str:
    checkout = Checkout(clone(work / "cold"), work / "root-cold")
    rows: Table = []
    try:
        for pattern in ("//core/...", "//..."):
            checkout.bazel("clean", "--expunge")
            checkout.bazel("info", "output_base")  # server up: not part of the figure
            run = checkout.bazel("build", *CI, pattern)
            stats = run.stats
            spawned = stats.cacheable if stats else 0
            rows.append([f"`{pattern}`", f"{run.wall:.1f} s", str(run.actions), str(spawned)])
    finally:
        checkout.shutdown()
    head = ["targets", "cold build wall time", "actions", "processes spawned"]
    return table(head, rows)


def bench_remote(work: Path) -> tuple[str, list[str]]:
    server = CacheServer(Path(tempfile.mkdtemp(prefix="torchsplit-bench-cache-")), _free_port())
    server.start()
    flags = [*CI, f"--remote_cache={server.url}", "--remote_timeout=30"]
    first = Checkout(clone(work / "a"), work / "root-a")
    # "Another machine": another directory, output root, HOME, PATH, and the venv and
    # CUDA toolkit reached through other paths (symlinks).
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    venv = Path(os.environ.get("TORCHSPLIT_VENV", Path.home() / ".cache/torchsplit/venv"))
    (elsewhere / "venv").symlink_to(venv)
    env = {
        "HOME": str(elsewhere),
        "PYTHON_BIN_PATH": str(elsewhere / "venv" / "bin" / "python3"),
        "PATH": f"{elsewhere}:/usr/local/sbin:/usr/sbin:/sbin:" + os.environ.get("PATH", ""),
    }
    # The same hermetic toolkit clone A builds with (never $CUDA_PATH: that picks the
    # machine's own toolkit, other content, rightly other keys), through another path.
    default_toolkits = Path.home() / ".cache" / "torchsplit" / "cuda"
    toolkits = os.environ.get("TORCHSPLIT_CUDA_CACHE") or str(default_toolkits)
    (elsewhere / "cuda").symlink_to(Path(toolkits).resolve())
    env["TORCHSPLIT_CUDA_CACHE"] = str(elsewhere / "cuda")
    # The same pinned CPU BLAS (@cpu_blas), through another path too.
    blas = os.environ.get("TORCHSPLIT_BLAS_CACHE") or str(Path.home() / ".cache/torchsplit/blas")
    (elsewhere / "blas").symlink_to(Path(blas).resolve())
    env["TORCHSPLIT_BLAS_CACHE"] = str(elsewhere / "blas")
    second = Checkout(clone(elsewhere / "b"), work / "root-b", env)
    rows: Table = []
    notes: list[str] = []
    try:
        runs = {}
        for name, checkout in (("cold (empty cache)", first), ("clean clone, warm cache", second)):
            log_build = work / f"{checkout.path.name}-build.json"
            log_test = work / f"{checkout.path.name}-test.json"
            build = checkout.bazel(
                "build", *flags, f"--execution_log_json_file={log_build}", "//..."
            )
            test = checkout.bazel(
                "test", *flags, f"--execution_log_json_file={log_test}", "//tests/..."
            )
            spawns = load_exec_log(log_build) + load_exec_log(log_test)
            stats = exec_log_stats(spawns)
            runs[name] = (build.wall + test.wall, spawns)
            rows.append(
                [
                    name,
                    f"{build.wall + test.wall:.1f} s",
                    f"{stats.hits}/{stats.cacheable}",
                    f"{stats.rate:.0%}",
                ]
            )
        cold_wall = runs["cold (empty cache)"][0]
        warm_wall = runs["clean clone, warm cache"][0]
        rows.append(["ratio warm/cold", f"{warm_wall / cold_wall:.2f}", "", ""])
        notes = explain_misses(runs["cold (empty cache)"][1], runs["clean clone, warm cache"][1])
    finally:
        first.shutdown()
        second.shutdown()
        server.stop()
        shutil.rmtree(server.state_dir, ignore_errors=True)
    head = ["build + test of //... and //tests/...", "wall time", "remote cache hits", "hit rate"]
    return table(head, rows), notes


def _pick(root: Path, directory: str, suffixes: tuple[str, ...]) -> Path | None:
    found = sorted(
        p for p in (root / directory).glob("**/*") if p.is_file() and p.suffix in suffixes
    )
    return found[0] if found else None


def bench_isolation(work: Path) -> str:
    checkout = Checkout(clone(work / "iso"), work / "root-iso")
    root = checkout.path
    edits: list[tuple[str, Path | None]] = [
        ("core .cc", _pick(root, "core/c10", CC)),
        ("core header (c10)", _pick(root, "core/c10", (".h",))),
        ("core header (shared op math)", _pick(root, "core/aten/native", (".h",))),
        ("torch_cuda .cu", _pick(root, "third_device/torch_cuda", (".cu",))),
        ("torch_cuda .cc", _pick(root, "third_device/torch_cuda/csrc/framework", CC)),
        ("torch_emu .cc", _pick(root, "third_device/torch_emu/csrc", CC)),
    ]
    rows: Table = []
    try:
        checkout.bazel("build", *CI, "//...")
        aquery = checkout.bazel("aquery", "--output=jsonproto", "deps(//...)")
        actions = parse_aquery(aquery.stdout)
        for n, (what, path) in enumerate(edits):
            if path is None:
                rows.append([what, "(no such file in this checkout)", "", "", "", "", ""])
                continue
            rel = str(path.relative_to(root))
            original = path.read_text()
            touch = f"\n// torchsplit bench: touched {n}\n"
            if path.suffix in (".cc", ".cu", ".cpp"):
                touch = f'\nextern "C" int torchsplit_bench_touched_{n}() {{ return {n}; }}\n'
            path.write_text(original + touch)
            log = work / f"iso-{n}.json"
            try:
                checkout.bazel("build", *CI, f"--execution_log_json_file={log}", "//...")
            finally:
                path.write_text(original)
            executed = load_exec_log(log)
            strict = dependents(actions, rel)
            strict_outputs = {o for a in strict for o in a.outputs}
            outside = [s for s in executed if not ({s.output, *s.outputs} & strict_outputs)]
            core = [s for s in executed if s.output.split("/bin/", 1)[-1].startswith("core/")]
            nvcc = [s for s in executed if s.mnemonic == "CudaCompile"]
            rows.append(
                [
                    what,
                    f"`{rel}`",
                    str(len(executed)),
                    str(len(strict)),
                    str(len(outside)),
                    str(len(core)),
                    str(len(nvcc)),
                ]
            )
            checkout.bazel("build", *CI, "//...")  # back to the committed state
    finally:
        checkout.shutdown()
    head = [
        "edit",
        "file",
        "executed",
        "strict set (aquery)",
        "executed outside it",
        "core actions executed",
        "nvcc actions executed",
    ]
    return table(head, rows)


def _time_queries(checkout: Checkout, audit: str) -> list[str]:
    checkout.shutdown()
    checkout.bazel("info", "output_base")  # a fresh server: nothing loaded yet
    analysis = checkout.bazel("build", "--nobuild", "--nosandbox_debug", "//...")
    query_all = checkout.bazel("query", "//...")
    targets = len(query_all.stdout.split())
    started = time.monotonic()
    result = checkout.bazel("query", audit)
    audit_wall = time.monotonic() - started
    violations = len(result.stdout.split())
    return [
        f"{analysis.wall:.1f} s",
        f"{query_all.wall:.2f} s ({targets} targets)",
        f"{audit_wall:.2f} s ({violations} violations)",
    ]


def _torchsplit_audit(path: Path) -> str:
    """Times `torchsplit audit` when the CLI has it (the layering work adds it)."""
    cli = [str(path / "tools" / "torchsplit"), "audit"]
    probe = subprocess.run([*cli, "--help"], cwd=path, capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return "not in this checkout"
    walls, codes = [], []
    for _ in range(3):  # the first starts the clone's own Bazel server; then warm
        started = time.monotonic()
        proc = subprocess.run(cli, cwd=path, capture_output=True, text=True, check=False)
        walls.append(time.monotonic() - started)
        codes.append(proc.returncode)
    warm = sorted(walls[1:])[0]
    return f"cold {walls[0]:.1f} s, warm {warm:.2f} s (exit {', '.join(map(str, codes))})"


def bench_query(work: Path, tiny: bool = False) -> str:
    """Query timings; tiny: the synthetic tree alone (no clone of this repository)."""
    audit = "deps(//core/...) intersect (//third_device/... + @local_cuda//...)"
    rows: Table = []
    if not tiny:
        repo = Checkout(clone(work / "q"), work / "root-q")
        try:
            rows.append(
                ["this repository", *_time_queries(repo, audit), _torchsplit_audit(repo.path)]
            )
        finally:
            repo.shutdown()
    from gen_pytorch_tree import generate

    counts = generate(work / "synthetic")
    syn = Checkout(work / "synthetic", work / "root-syn")
    syn_audit = "deps(//core/...) intersect //third_device/..."
    try:
        label = f"synthetic PyTorch-scale tree ({counts['sources']} sources)"
        rows.append([label, *_time_queries(syn, syn_audit), "n/a (not a torchsplit checkout)"])
    finally:
        syn.shutdown()
    head = [
        "workspace",
        "loading + analysis of //... (fresh server)",
        "query //...",
        "audit query: core -> device deps",
        "torchsplit audit",
    ]
    return table(head, rows)


def bench_ops() -> str:
    """Section 5: bench_ops.py over the wheels in dist/ (tools/dev wheels makes them)."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_ops.py")], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"bench_ops.py exited {proc.returncode}")
    return proc.stdout


def _remote(work: Path, tiny: bool) -> str:
    text, notes = bench_remote(work)
    if notes:
        text += "\n\nMisses, explained against the cold build:\n\n" + "\n".join(
            f"- {n}" for n in notes
        )
    return text


@dataclass(frozen=True)
class Section:
    """One `##` section of docs/benchmarks.md."""

    key: str
    title: str
    note: str
    run: Callable[[Path, bool], str]  # (work directory, tiny) -> markdown
    has_tiny: bool = False  # runs with --tiny (on small inputs)


SECTIONS: list[Section] = [
    Section("cold", "Cold build: core alone vs everything", NOTES[1], lambda w, t: bench_cold(w)),
    Section("remote", "Clean clone elsewhere, warm remote cache vs cold", NOTES[2], _remote),
    Section("isolation", "Incremental isolation", NOTES[3], lambda w, t: bench_isolation(w)),
    Section("query", "Analysis, query and audit time", NOTES[4], bench_query, has_tiny=True),
    Section(
        "toolkit",
        bench_toolkit.TITLE,
        bench_toolkit.NOTE,
        lambda w, t: bench_toolkit.body(w, tiny=t),
        has_tiny=True,
    ),
    Section("ops", "Op timings of the release wheels", NOTES[5], lambda w, t: bench_ops()),
]


def pick(only: str | None, tiny: bool) -> list[tuple[int, Section]]:
    """The sections to run, numbered in document order; --only takes keys or numbers."""
    numbered = list(enumerate(SECTIONS, start=1))
    if only is None:
        return [(n, s) for n, s in numbered if s.has_tiny or not tiny]
    chosen = []
    for item in (x.strip() for x in only.split(",") if x.strip()):
        match = [(n, s) for n, s in numbered if item in (s.key, str(n))]
        if not match:
            keys = ", ".join(f"{n}={s.key}" for n, s in numbered)
            raise TorchsplitError(f"--only: no section {item!r} (sections: {keys})")
        if tiny and not match[0][1].has_tiny:
            raise TorchsplitError(f"--only: section {item!r} has no --tiny variant")
        chosen += match
    return chosen


def run_sections(
    chosen: list[tuple[int, Section]], work: Path, tiny: bool, head: str
) -> tuple[list[str], list[str]]:
    """Markdown of every chosen section and the titles of those that failed; a failing
    one is reported, not fatal.

    Each section is stamped with its own commit, date and load: with --replace the
    document mixes sections measured at different times.
    """
    out: list[str] = []
    failed: list[str] = []
    for n, section in chosen:
        stamp = (
            f"*Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at "
            f"commit {head} on {machine()}; load average {os.getloadavg()[0]:.1f} at the "
            "start.*\n"
        )
        try:
            body = section.run(work / section.key, tiny)
        except Exception as exc:  # report, keep going: one broken benchmark loses one section
            failed.append(section.title)
            body = f"*Not measured: the benchmark failed ({type(exc).__name__}: {exc}).*"
            print(f"run_all: section {section.key} failed: {exc}", file=sys.stderr, flush=True)
        out += [f"## {n}. {section.title}\n", section.note, stamp, body, ""]
        print(body, flush=True)
    return out, failed


def _split_sections(text: str) -> tuple[list[str], dict[str, str]]:
    """(lines before the first `##`, {title without its number: section text})."""
    head: list[str] = []
    sections: dict[str, str] = {}
    title = None
    # Another script's begin marker (`<!-- x:begin -->`) sits just above its `##` line:
    # it belongs to that section, not to the one before (or replacing the one before
    # would drop it).
    pending: list[str] = []
    for line in text.splitlines():
        if line.startswith("<!--") and line.rstrip().endswith(":begin -->"):
            pending.append(line)
            continue
        if line.startswith("## "):
            title = line[3:].split(". ", 1)[-1].strip()
            sections[title] = ""
        elif pending:  # a marker not followed by a heading stays where it was
            line = "\n".join([*pending, line])
        if title is None:
            head.append(line)
        else:
            sections[title] += line + "\n"
            if line.startswith("## ") and pending:
                sections[title] = "\n".join(pending) + "\n" + sections[title]
        pending = []
    return head, sections


def merge(
    existing: str, fresh: list[str], chosen: list[tuple[int, Section]], failed: list[str]
) -> list[str]:
    """Replaces the chosen sections in an existing document and keeps every other one
    (SECTIONS' first, then sections other scripts wrote), renumbered in that order.
    A chosen section that failed keeps its earlier text where there is one: a failed
    run does not replace earlier figures with an error."""
    _, old = _split_sections(existing)
    _, new = _split_sections("\n".join(fresh))
    for title in failed:
        if title in old:
            new.pop(title, None)
    order = [s.title for s in SECTIONS] + [t for t in old if t not in {s.title for s in SECTIONS}]
    out: list[str] = []
    number = 0
    for title in order:
        body = new.get(title, old.get(title))
        if body is None:
            continue
        number += 1
        markers, heading_and_rest = [], body
        while heading_and_rest.startswith("<!--"):
            marker, heading_and_rest = heading_and_rest.split("\n", 1)
            markers.append(marker + "\n")
        rest = heading_and_rest.split("\n", 1)[1].rstrip("\n")
        out.append("".join(markers) + f"## {number}. {title}\n" + rest + "\n")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated section keys or numbers (default: all)")
    parser.add_argument("--tiny", action="store_true", help="small inputs, sections that allow it")
    parser.add_argument(
        "--out", default=str(REPO / "docs" / "benchmarks.md"), help="default: docs/benchmarks.md"
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="with --only: update those sections of --out in place, keep the others",
    )
    args = parser.parse_args(argv)
    try:
        chosen = pick(args.only, args.tiny)
        if not Path(args.out).parent.is_dir():
            raise TorchsplitError("the output's directory does not exist", args.out)
    except TorchsplitError as exc:
        print(f"torchsplit: error: {exc}", file=sys.stderr)
        return 2
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    doc = [
        "# Build benchmarks\n",
        "Generated by `python3 bench/run_all.py` (figures vary run to run; nothing asserts "
        "on them). `--only KEYS` runs some sections (keys `cold`, `remote`, `isolation`, "
        "`query`, `toolkit`, `ops`, or their numbers) and `--replace` then keeps the other "
        "sections of the file; `--tiny` uses small inputs where a section has them; `--out "
        "FILE` writes elsewhere (default: this file). See docs/remote-cache.md for the "
        "cache itself.\n",
        f"- machine: {machine()}",
        "- Bazel 4.2.3 (Debian), fresh clones of the commit each section names, each with"
        " its own output root" + ("; --tiny (small inputs)" if args.tiny else "") + "\n",
    ]
    work = Path(tempfile.mkdtemp(prefix="torchsplit-bench-"))
    try:
        for _, section in chosen:
            (work / section.key).mkdir()
        body, failed = run_sections(chosen, work, args.tiny, head)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.replace and Path(args.out).exists():
        body = merge(Path(args.out).read_text(), body, chosen, failed)
    write_output(args.out, "\n".join(doc + body) + "\n")
    print(f"wrote {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
