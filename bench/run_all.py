"""Build-performance benchmarks, one command: python3 bench/run_all.py [--only 1,2,3,4]

1. cold build of //core/... (no CUDA) vs //... (everything): wall time, actions
2. a clean clone elsewhere ("another machine") against a warm remote cache vs cold
3. incremental isolation: touch one file per area, count executed actions against the
   strict set of actions depending on it (aquery)
4. analysis / query / audit time on this repo and on a synthetic PyTorch-scale tree

Works on fresh clones of HEAD (commit first), each with its own output root, and a
private nginx cache. Prints the tables and writes docs/benchmarks.md. Asserts nothing.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from action_graph import dependents, parse_aquery
from bazel_bench import REPO, Checkout, clone, machine

from torchsplit.cache.server import CacheServer
from torchsplit.cache.stats import exec_log_stats, explain_misses, load_exec_log

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
        "s list names and counts, BUILD overlay from `torchsplit reorg emit`. The `torchs"
        "plit audit` column is filled once the layering CLI is in the checkout.\n"
    ),
    5: (
        "`python3 bench/bench_ops.py`: the release wheels of dist/ (`tools/dev wheels`, "
        "-c opt) installed in a temporary virtualenv, against NumPy and PyTorch's CPU "
        "wheel, one thread each. The issue's fastbuild (-O0) figures were 15-185x NumPy.\n"
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
    toolkit = Path("/usr/local/cuda")
    if (toolkit / "bin" / "nvcc").exists():
        (elsewhere / "cuda").symlink_to(toolkit.resolve())
        env["CUDA_PATH"] = str(elsewhere / "cuda")
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
    started = time.monotonic()
    proc = subprocess.run(cli, cwd=path, capture_output=True, text=True, check=False)
    return f"{time.monotonic() - started:.1f} s (exit {proc.returncode})"


def bench_query(work: Path) -> str:
    audit = "deps(//core/...) intersect (//third_device/... + @local_cuda//...)"
    rows: Table = []
    repo = Checkout(clone(work / "q"), work / "root-q")
    try:
        rows.append(["this repository", *_time_queries(repo, audit), _torchsplit_audit(repo.path)])
    finally:
        repo.shutdown()
    sys.path.insert(0, str(REPO / "bench"))
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
    return proc.stdout if proc.returncode == 0 else f"not measured: {proc.stderr.strip()}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="1,2,3,4,5", help="comma-separated benchmark numbers")
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    wanted = {int(x) for x in args.only.split(",")}
    work = Path(tempfile.mkdtemp(prefix="torchsplit-bench-"))
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    sections = [
        "# Build benchmarks\n",
        "Generated by `python3 bench/run_all.py` (figures vary run to run; nothing asserts "
        "on them). See docs/remote-cache.md for the cache itself.\n",
        f"- machine: {machine()}",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- commit: {head}; Bazel 4.2.3 (Debian), fresh clones with their own output root\n",
    ]
    try:
        if 1 in wanted:
            sections += [
                "## 1. Cold build: core alone vs everything\n",
                NOTES[1],
                bench_cold(work),
                "",
            ]
            print(sections[-2], flush=True)
        if 2 in wanted:
            text, notes = bench_remote(work)
            sections += [
                "## 2. Clean clone elsewhere, warm remote cache vs cold\n",
                NOTES[2],
                text,
                "",
            ]
            if notes:
                sections += ["Misses, explained against the cold build:\n"]
                sections += [f"- {n}" for n in notes] + [""]
            print(text, flush=True)
        if 3 in wanted:
            sections += ["## 3. Incremental isolation\n", NOTES[3], bench_isolation(work), ""]
            print(sections[-2], flush=True)
        if 4 in wanted:
            sections += ["## 4. Analysis, query and audit time\n", NOTES[4], bench_query(work), ""]
            print(sections[-2], flush=True)
        if 5 in wanted:
            sections += ["## 5. Op timings of the release wheels\n", NOTES[5], bench_ops(), ""]
            print(sections[-2], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).write_text("\n".join(sections) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
