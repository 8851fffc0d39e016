"""Op timings of the installed release wheels against NumPy and PyTorch (CPU).

Usage: python3 bench/bench_ops.py [--wheels DIR] [--repeat N]
Installs torch_core and torch_emu from DIR (default dist/, made by
`tools/dev wheels`) into a temporary virtualenv that also sees the project
venv's NumPy and PyTorch 2.13 CPU, and times, single-threaded, add, exp, sum,
softmax (1e6 float32 elements, softmax over rows of 1000x1000) and matmul
(512x512), plus the per-call overhead of a small op (8 elements). Prints a
Markdown table (best of --repeat rounds); asserts nothing.
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

WORKER = r"""
import json, sys, timeit
import numpy as np
import torch
import torch_core as tc

torch.set_num_threads(1)
repeat = int(sys.argv[1])
rng = np.random.default_rng(0)
v1, v2 = rng.random(1_000_000, dtype=np.float32), rng.random(1_000_000, dtype=np.float32)
sq = rng.random((1000, 1000), dtype=np.float32)
m1, m2 = rng.random((512, 512), dtype=np.float32), rng.random((512, 512), dtype=np.float32)
s1, s2 = rng.random(8, dtype=np.float32), rng.random(8, dtype=np.float32)


def np_softmax(a):
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def best(fn):
    number = max(1, int(0.05 / max(timeit.timeit(fn, number=1), 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


backends = {
    "torch_core": (tc.tensor, lambda x: x.softmax(1)),
    "numpy": (np.asarray, np_softmax),
    "torch": (torch.from_numpy, lambda x: x.softmax(1)),
}
rows = {}
for name, (make, softmax) in backends.items():
    a, b, s, x, y, p, q = (make(t) for t in (v1, v2, sq, m1, m2, s1, s2))
    rows[name] = {
        "add 1e6": best(lambda: a + b),
        "exp 1e6": best(lambda: a.exp() if name != "numpy" else np.exp(a)),
        "sum 1e6": best(lambda: a.sum()),
        "softmax 1000x1000": best(lambda: softmax(s)),
        "matmul 512x512": best(lambda: x @ y),
        "add 8 (overhead)": best(lambda: p + q),
    }
print(json.dumps({"rows": rows, "numpy": np.__version__, "torch": torch.__version__}))
"""


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, default=REPO / "dist", help="default: dist/")
    parser.add_argument("--repeat", type=int, default=5, help="timing rounds (best is kept)")
    args = parser.parse_args(argv)
    wheels = sorted(args.wheels.glob("torch_core-*.whl"))
    if not wheels:
        print(
            f"bench_ops: error: no torch_core wheel in {args.wheels}: run tools/dev wheels",
            file=sys.stderr,
        )
        return 2
    work = Path(tempfile.mkdtemp(prefix="torchsplit-bench-ops-"))
    try:
        # The venv sees this interpreter's numpy and torch (a .pth file); the wheel goes on top.
        subprocess.run([sys.executable, "-m", "venv", str(work / "v")], check=True)
        python = work / "v" / "bin" / "python"
        site = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        Path(site, "project_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-index",
                "--no-deps",
                str(wheels[-1]),
            ],
            check=True,
        )
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
    report = json.loads(out.stdout)
    rows = report["rows"]
    print(
        f"`{wheels[-1].name}` (release, -c opt), NumPy {report['numpy']}, "
        f"PyTorch {report['torch']} CPU; one thread each, float32, best of {args.repeat}.\n"
    )
    print("| op | torch_core | NumPy | PyTorch CPU | torch_core / NumPy | torch_core / PyTorch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for op, ours in rows["torch_core"].items():
        ref_np, ref_torch = rows["numpy"][op], rows["torch"][op]
        print(
            f"| {op} | {_fmt(ours)} | {_fmt(ref_np)} | {_fmt(ref_torch)} | "
            f"{ours / ref_np:.1f}x | {ours / ref_torch:.1f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
