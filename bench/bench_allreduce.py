"""Benchmark: all_reduce bus bandwidth of the tcp backend (CPU tensors), 1 MiB to 256 MiB.

Usage: python3 bench/bench_allreduce.py [--world 2] [--max-mib 256] [--iters 3]
Run after a build (torch_core._C in bazel-bin). Spawns one process per rank on
loopback; prints a table; asserts nothing. Bus bandwidth follows nccl-tests:
algbw = bytes / time, busbw = algbw * 2 * (world - 1) / world.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _rank(rank: int, world: int, port: int, max_mib: int, iters: int) -> None:
    import torch_core as tc
    import torch_core.distributed as dist

    dist.init_process_group(
        "tcp", f"tcp://127.0.0.1:{port}", rank=rank, world_size=world, timeout=120
    )
    sizes = [1 << 20 << k for k in range(max_mib.bit_length()) if (1 << k) <= max_mib]
    if rank == 0:
        print(f"all_reduce (sum, float32), tcp backend, world {world}, {iters} timed iterations")
        print(f"{'size':>9} {'time (ms)':>10} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}")
    for nbytes in sizes:
        t = tc.ones(nbytes // 4)
        dist.all_reduce(t)  # warm-up, and connections
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        elapsed = (time.perf_counter() - start) / iters
        assert float(t.numpy()[0]) == float(world ** (iters + 1))
        if rank == 0:
            algbw = nbytes / elapsed / 1e9
            busbw = algbw * 2 * (world - 1) / world
            print(
                f"{nbytes >> 20:>5} MiB {elapsed * 1e3:>10.1f} {algbw:>13.2f} {busbw:>13.2f}",
                flush=True,
            )
        del t
    dist.destroy_process_group()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--max-mib", type=int, default=256)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rank is not None:
        _rank(args.rank, args.world, args.port, args.max_mib, args.iters)
        return 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    paths = [str(base / "core") for base in (REPO, REPO / "bazel-bin")]
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([*paths, *sys.path]), TORCH_CORE_NO_AUTOLOAD="1"
    )
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--rank",
                str(r),
                "--world",
                str(args.world),
                "--port",
                str(port),
                "--max-mib",
                str(args.max_mib),
                "--iters",
                str(args.iters),
            ],
            env=env,
        )
        for r in range(args.world)
    ]
    deadline = time.monotonic() + 900
    rc = 0
    try:
        for p in procs:
            rc |= p.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
