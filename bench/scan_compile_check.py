"""Cross-check ``torchsplit scan --plan`` against a real compile of PyTorch's c10 core.

Usage: python3 bench/scan_compile_check.py [TREE] [--jobs N]

TREE is a real PyTorch source tree (default: ``~/.cache/torchsplit/upstream/2.6.0``,
where ``tools/torchsplit upstream fetch`` unpacks PyTorch 2.6.0). The
script runs the plan over the tree's ``c10/``, ``aten/src/ATen/`` and ``torch/`` as the
CLI would, then compiles every c10 core source (``c10/{core,util,macros,mobile}/**/*.cpp``)
with g++ while the CUDA toolkit is hidden (``tests/bazel/hide_cuda.py`` in a private
mount namespace), and prints, per plan bucket, how many compile. A file the plan leaves
untouched (no code coupling: mentions only or no finding) that fails to compile is a
disagreement: the plan missed a coupling. Edits may compile or not (a guarded coupling
compiles away); both are listed.

A measurement, not a test: it needs root (for the mount namespace), g++ 12, Debian's
libfmt-dev and libcpuinfo-dev, and a real tree, and it takes about a minute on two
cores. It prints figures and asserts nothing. Without root it compiles with the
toolkit visible and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools" / "python"))

from torchsplit.scan.plan import build_plan  # noqa: E402
from torchsplit.scan.scanner import scan_tree  # noqa: E402

DEFAULT_TREE = Path.home() / ".cache" / "torchsplit" / "upstream" / "2.6.0"
ROOTS = ("c10", "aten/src/ATen", "torch")
SUFFIXES = (".cpp", ".cu", ".cuh", ".h", ".py")
CORE_DIRS = ("c10/core", "c10/util", "c10/macros", "c10/mobile")
# cmake_macros.h as c10's CMake writes it for a shared build without glog, gflags, NUMA.
DEFINED_MACROS = {"C10_BUILD_SHARED_LIBS"}
_ERROR = re.compile(r"(?:error|fatal error): (.*)")


def compile_worker(job_file: str) -> int:
    """Inside the namespace: compile every source of the job, print results as JSON."""
    job = json.loads(Path(job_file).read_text())
    probe = subprocess.run(
        [job["cxx"], "-x", "c++", "-E", "-"],
        input="#include <cuda_runtime.h>\n",
        capture_output=True,
        text=True,
        check=False,
    )

    def one(src: str) -> dict[str, object]:
        obj = os.path.join(job["objdir"], src.replace("/", "_") + ".o")
        argv = [job["cxx"], *job["flags"], "-c", os.path.join(job["tree"], src), "-o", obj]
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        errors = [m.group(1) for m in _ERROR.finditer(proc.stderr)]
        return {
            "src": src,
            "rc": proc.returncode,
            "seconds": round(time.perf_counter() - t0, 2),
            "error": errors[0] if errors else proc.stderr.strip()[-300:],
        }

    with ThreadPoolExecutor(max_workers=job["jobs"]) as pool:
        results = list(pool.map(one, job["sources"]))
    print(json.dumps({"cuda_header_visible": probe.returncode == 0, "results": results}))
    return 0


def write_cmake_macros(tree: Path, gen: Path) -> None:
    template = (tree / "c10" / "macros" / "cmake_macros.h.in").read_text()

    def define(m: re.Match[str]) -> str:
        name = m.group(1)
        return f"#define {name}" if name in DEFINED_MACROS else f"/* #undef {name} */"

    out = gen / "c10" / "macros" / "cmake_macros.h"
    out.parent.mkdir(parents=True)
    out.write_text(re.sub(r"#cmakedefine (\w+)", define, template))


def plan_buckets(tree: Path, jobs: int) -> tuple[dict[str, str], dict[str, str], float, int]:
    """Each scanned file's plan bucket and categories, the scan's wall time, files scanned."""
    t0 = time.perf_counter()
    result = scan_tree([str(tree / r) for r in ROOTS], base=str(tree), suffixes=SUFFIXES, jobs=jobs)
    plan = build_plan(result.files, "all", None, result.paths, base=str(tree))
    wall = time.perf_counter() - t0
    bucket: dict[str, str] = {}
    for path in plan.mentions:
        bucket[path] = "mentions only"
    for path in plan.edits:
        bucket[path] = "edit"
    for path in plan.moves:
        bucket[path] = "move"
    for files in plan.torchgen.values():
        bucket.update(dict.fromkeys(files, "move (torchgen)"))
    for files in plan.generated.values():
        bucket.update(dict.fromkeys(files, "generated"))
    categories = {
        path: ", ".join(f"{c} {n}" for c, n in sorted(edit.categories.items()))
        for path, edit in [*plan.edits.items(), *plan.mentions.items()]
    }
    return bucket, categories, wall, result.scanned


def main(argv: list[str]) -> int:
    if argv[:1] == ["--compile-worker"]:
        return compile_worker(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=DEFAULT_TREE)
    parser.add_argument("--jobs", type=int, default=2, help="compiles at once (default 2)")
    parser.add_argument("--cxx", default="g++-12", help="C++ compiler (default g++-12)")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    if not (tree / "c10" / "macros" / "cmake_macros.h.in").is_file():
        print(
            f"torchsplit: error: {tree}: not a PyTorch source tree (no c10/macros/"
            "cmake_macros.h.in); get one with: tools/torchsplit upstream fetch",
            file=sys.stderr,
        )
        return 2
    cxx = shutil.which(args.cxx)
    if cxx is None:
        print(f"torchsplit: error: no {args.cxx} on PATH", file=sys.stderr)
        return 2
    print(f"tree: {tree}; load average {os.getloadavg()[0]:.1f}")
    bucket, categories, scan_wall, scanned = plan_buckets(tree, args.jobs)
    print(f"plan: {scanned} files scanned in {scan_wall:.1f} s")
    sources = sorted(
        str(p.relative_to(tree))
        for d in CORE_DIRS
        for p in (tree / d).rglob("*.cpp")
        if p.is_file()
    )
    hide = os.geteuid() == 0 and shutil.which("unshare") is not None
    with tempfile.TemporaryDirectory(prefix="scan_compile_") as tmp:
        work = Path(tmp)
        write_cmake_macros(tree, work / "gen")
        (work / "obj").mkdir()
        (work / "out").mkdir()
        flags = ["-std=c++17", "-O0", "-fPIC", "-DC10_BUILD_MAIN_LIB", "-w"]
        flags += ["-I", str(work / "gen"), "-I", str(tree)]
        job = {
            "cxx": cxx,
            "flags": flags,
            "tree": str(tree),
            "objdir": str(work / "obj"),
            "sources": sources,
            "jobs": args.jobs,
        }
        job_file = work / "job.json"
        job_file.write_text(json.dumps(job))
        worker = [sys.executable, str(Path(__file__).resolve()), "--compile-worker", str(job_file)]
        t0 = time.perf_counter()
        if hide:
            command = [
                "unshare",
                "-m",
                sys.executable,
                str(REPO / "tests" / "bazel" / "hide_cuda.py"),
                str(work / "out"),
                json.dumps([worker]),
            ]
            proc = subprocess.run(command, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(f"torchsplit: error: hiding the toolkit failed: {proc.stderr.strip()}")
                return 2
            output = (work / "out" / "0.out").read_text()
        else:
            print("note: not root: compiling with the CUDA toolkit visible")
            output = subprocess.run(worker, capture_output=True, text=True, check=True).stdout
        wall = time.perf_counter() - t0
    report = json.loads(output)
    results = report["results"]
    print(
        f"compile: {len(results)} c10 core .cpp ({', '.join(CORE_DIRS)}) with {Path(cxx).name}, "
        f"{args.jobs} at once, {wall:.0f} s; toolkit hidden: {'yes' if hide else 'no'}; "
        f"<cuda_runtime.h> visible to the compiler: "
        f"{'yes' if report['cuda_header_visible'] else 'no'}"
    )
    rows: dict[str, list[int]] = {}
    disagree = []
    failed_edits = []
    for r in results:
        name = bucket.get(r["src"], "no finding")
        ok = r["rc"] == 0
        row = rows.setdefault(name, [0, 0])
        row[0 if ok else 1] += 1
        if not ok and name in ("mentions only", "no finding"):
            disagree.append(r)
        elif not ok:
            failed_edits.append((name, r))
    print(f"{'plan bucket':<18} {'files':>5} {'compile':>8} {'fail':>5}")
    for name in ("no finding", "mentions only", "edit", "move", "move (torchgen)", "generated"):
        if name in rows:
            ok, bad = rows[name]
            print(f"{name:<18} {ok + bad:>5} {ok:>8} {bad:>5}")
    untouched = sum(sum(rows.get(n, [0, 0])) for n in ("no finding", "mentions only"))
    print(
        f"disagreements: {len(disagree)} of {untouched} file(s) the plan leaves untouched "
        "fail to compile with the toolkit hidden"
    )
    for r in disagree:
        print(f"  {r['src']}: {r['error']}")
    for name, r in failed_edits:
        print(f"  ({name}, expected possible) {r['src']}: {r['error']}")
    for r in results:  # what the plan says of the sources it does not leave untouched
        name = bucket.get(r["src"], "no finding")
        if name != "no finding":
            state = "compiles" if r["rc"] == 0 else "fails"
            print(f"  {name}: {r['src']} ({state}; {categories.get(r['src'], '')})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
