"""Op timings of the installed release wheel against NumPy and PyTorch (CPU), one thread each.

Usage: python3 bench/bench_ops.py [--wheels DIR] [--repeat N]

Installs torch_core from DIR (default dist/, made by `tools/dev wheels`) into a
temporary virtualenv that also sees the project venv's NumPy and PyTorch CPU,
and times, in one process with every library pinned to one thread
(torch_core.set_num_threads(1), torch.set_num_threads(1), NumPy's BLAS through
OPENBLAS_NUM_THREADS=1): add, mul, exp and sum of 1e6 float32 elements,
softmax over the rows of 1000x1000, matmul 256x256 and 512x512, and the
per-op cost of an 8-element add. Each of --repeat rounds (at least 25) times
every op in every library in turn, so load during the run falls on all three;
the best round counts. Prints the machine's load, the CPU capability and BLAS
torch_core used, and a Markdown table with the ratios (docs/benchmarks.md's op
section: `python3 bench/run_all.py --only ops --replace`). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIN_REPEAT = 25

WORKER = r"""
import json, os, resource, sys, timeit
import numpy as np
import torch
import torch_core as tc

torch.set_num_threads(1)
tc.set_num_threads(1)
repeat = int(sys.argv[1])
rng = np.random.default_rng(0)
v1, v2 = rng.random(1_000_000, dtype=np.float32), rng.random(1_000_000, dtype=np.float32)
sq = rng.random((1000, 1000), dtype=np.float32)
m256 = [rng.random((256, 256), dtype=np.float32) for _ in range(2)]
m512 = [rng.random((512, 512), dtype=np.float32) for _ in range(2)]
s1, s2 = rng.random(8, dtype=np.float32), rng.random(8, dtype=np.float32)


def np_softmax(a):
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def ops(make, softmax, exp):
    a, b, s, x, y, p, q, u, w = (make(t) for t in (v1, v2, sq, *m256, *m512, s1, s2))
    return {
        "add 1e6": lambda: a + b,
        "mul 1e6": lambda: a * b,
        "exp 1e6": lambda: exp(a),
        "sum 1e6": lambda: a.sum(),
        "softmax(1) 1000x1000": lambda: softmax(s),
        "matmul 256x256": lambda: x @ y,
        "matmul 512x512": lambda: p @ q,
        "add 8 (per-op cost)": lambda: u + w,
    }


libraries = {
    "torch_core": ops(tc.tensor, lambda t: t.softmax(1), lambda t: t.exp()),
    "numpy": ops(np.asarray, np_softmax, np.exp),
    "torch": ops(torch.from_numpy, lambda t: t.softmax(1), torch.exp),
}
# Calls per round: about 20 ms of work each, from one warm-up call.
numbers = {}
for lib, table in libraries.items():
    for op, fn in table.items():
        fn()
        numbers[lib, op] = max(1, int(0.02 / max(timeit.timeit(fn, number=1), 1e-7)))
best = {}
faults = {}
load_before = os.getloadavg()
for _ in range(repeat):
    for op in libraries["torch_core"]:
        for lib, table in libraries.items():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t = timeit.timeit(table[op], number=numbers[lib, op]) / numbers[lib, op]
            after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            best[lib, op] = min(best.get((lib, op), t), t)
            per_call = (after - before) / numbers[lib, op]
            faults[lib, op] = faults.get((lib, op), 0) + per_call / repeat
print(json.dumps({
    "rows": {lib: {op: best[lib, op] for op in table} for lib, table in libraries.items()},
    "faults": {lib: {op: faults[lib, op] for op in table} for lib, table in libraries.items()},
    "numpy": np.__version__,
    "torch": torch.__version__,
    "threads": {"torch_core": tc.get_num_threads(), "torch": torch.get_num_threads(),
                "numpy_env": os.environ.get("OPENBLAS_NUM_THREADS")},
    "config": tc.config(),
    "load": [load_before, os.getloadavg()],
}))
"""


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def _venv_with(wheel: Path, work: Path) -> Path:
    """A virtualenv seeing this interpreter's numpy and torch (a .pth file), the wheel on top."""
    subprocess.run([sys.executable, "-m", "venv", str(work / "v")], check=True)
    python = work / "v" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "project_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "--no-index", "--no-deps", str(wheel)], check=True)
    return python


def render(report: dict, wheel: str, repeat: int) -> str:
    rows = report["rows"]
    config = report["config"]
    (before, after) = report["load"]
    threads = report["threads"]
    lines = [
        f"`{wheel}` (release, -c opt), NumPy {report['numpy']}, PyTorch {report['torch']} CPU; "
        f"float32, best of {repeat} interleaved rounds in one process.",
        "",
        f"- threads: torch_core {threads['torch_core']}, PyTorch {threads['torch']}, NumPy's "
        f"BLAS OPENBLAS_NUM_THREADS={threads['numpy_env']}",
        f"- torch_core: CPU capability `{config['cpu_capability']}` (supported: "
        f"{', '.join(config['cpu_capabilities_supported'])}), BLAS {config['blas']} "
        f"(`{config['blas_config']}`)",
        f"- load average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in before)} before, "
        f"{', '.join(f'{x:.2f}' for x in after)} after",
        "",
        "| op | torch_core | NumPy | PyTorch CPU | torch_core / NumPy | torch_core / PyTorch |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for op, ours in rows["torch_core"].items():
        ref_np, ref_torch = rows["numpy"][op], rows["torch"][op]
        lines.append(
            f"| {op} | {_fmt(ours)} | {_fmt(ref_np)} | {_fmt(ref_torch)} | "
            f"{ours / ref_np:.2f}x | {ours / ref_torch:.2f}x |"
        )
    # A call that page-faults got fresh memory from the OS for its output (glibc
    # returned the heap's top between calls): that cost is the allocator's, not the kernel's.
    faulting = [
        f"{lib} {op} ({n:.0f})"
        for lib, per_op in report["faults"].items()
        for op, n in per_op.items()
        if n >= 10
    ]
    lines += [
        "",
        "Minor page faults per call, averaged over the rounds, where 10 or more: "
        + (", ".join(faulting) if faulting else "none")
        + ".",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, default=REPO / "dist", help="default: dist/")
    parser.add_argument(
        "--repeat", type=int, default=MIN_REPEAT, help=f"timing rounds, >= {MIN_REPEAT} (best kept)"
    )
    args = parser.parse_args(argv)
    if args.repeat < MIN_REPEAT:
        print(f"bench_ops: error: --repeat must be at least {MIN_REPEAT}", file=sys.stderr)
        return 2
    wheels = sorted(args.wheels.glob("torch_core-*.whl"))
    if not wheels:
        print(
            f"bench_ops: error: no torch_core wheel in {args.wheels}: run tools/dev wheels",
            file=sys.stderr,
        )
        return 2
    work = Path(tempfile.mkdtemp(prefix="torchsplit-bench-ops-"))
    try:
        python = _venv_with(wheels[-1], work)
        env = dict(
            os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", TORCH_CORE_NO_AUTOLOAD="1"
        )
        env.pop("PYTHONPATH", None)
        out = subprocess.run(
            [str(python), "-c", WORKER, str(args.repeat)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(render(json.loads(out.stdout), wheels[-1].name, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
