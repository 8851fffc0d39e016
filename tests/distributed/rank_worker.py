"""One rank of a distributed test.

Usage: ``rank_worker.py SCENARIO DEVICE RANK WORLD PORT TIMEOUT [ARGS]``.

Checks results itself (assertions exit non-zero with a traceback) and prints
one JSON line for the test to inspect. DEVICE is ``cpu`` or ``emu`` (rank r
then uses emu:r%2, the emulated devices of its own process).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

import numpy as np

import torch_core as tc
import torch_core.distributed as dist

SIZES = [0, 1, 5, 7, 1000, 100_003]
DTYPES = [np.float32, np.float64, np.int64]


def _values(n: int, dtype: type, rank: int, salt: int = 0) -> np.ndarray:
    rng = np.random.default_rng(1000 * salt + rank)
    if dtype is np.bool_:
        return rng.random(n) > 0.7
    if dtype is np.int64:
        return rng.integers(-50, 50, n).astype(np.int64)
    # Small integers keep float sums exact whatever the reduction order.
    return rng.integers(-50, 50, n).astype(dtype)


def _expected(op: str, arrays: list[np.ndarray]) -> np.ndarray:
    stack = np.stack(arrays)
    if op == "sum":
        return stack.sum(0).astype(stack.dtype) if stack.dtype != np.bool_ else stack.any(0)
    if op == "avg":
        return (stack.sum(0) / len(arrays)).astype(stack.dtype)
    if op == "max":
        return stack.max(0)
    if op == "min":
        return stack.min(0)
    if op == "product":
        return stack.prod(0).astype(stack.dtype) if stack.dtype != np.bool_ else stack.all(0)
    raise ValueError(op)


def collectives(device: str, rank: int, world: int, args: list[str]) -> dict[str, object]:
    count = 0
    for n in SIZES:
        for dtype in DTYPES:
            for op in ["sum", "avg", "max", "min", "product"]:
                if op == "avg" and dtype is np.int64:
                    continue
                data = [_values(n, dtype, r, salt=n) for r in range(world)]
                if op == "product":
                    data = [np.clip(d, -3, 3) for d in data]
                t = tc.tensor(data[rank], device=device)
                dist.all_reduce(t, op)
                np.testing.assert_array_equal(t.numpy(), _expected(op, data), err_msg=f"{op} n={n}")
                count += 1
        # bool: sum is "or", product is "and".
        flags = [_values(n, np.bool_, r, salt=n) for r in range(world)]
        t = tc.tensor(flags[rank], device=device)
        dist.all_reduce(t, "sum")
        np.testing.assert_array_equal(t.numpy(), _expected("sum", flags))
        # broadcast from every source
        for src in range(world):
            t = tc.tensor(_values(n, np.float64, rank, salt=src + 7), device=device)
            dist.broadcast(t, src)
            np.testing.assert_array_equal(t.numpy(), _values(n, np.float64, src, salt=src + 7))
        # all_gather, 2-d
        mine = tc.tensor(_values(n, np.float32, rank).reshape(-1, 1), device=device)
        outs = [tc.full([n, 1], -1.0, device=device) for _ in range(world)]
        dist.all_gather(outs, mine)
        for r in range(world):
            np.testing.assert_array_equal(outs[r].numpy()[:, 0], _values(n, np.float32, r))
        # reduce_scatter: output r = sum over ranks of input_list[r]
        inputs = [
            tc.tensor(_values(n, np.int64, rank, salt=r + 3), device=device) for r in range(world)
        ]
        out = tc.zeros(n, dtype=tc.int64, device=device)
        dist.reduce_scatter(out, inputs, "sum")
        want = _expected("sum", [_values(n, np.int64, q, salt=rank + 3) for q in range(world)])
        np.testing.assert_array_equal(out.numpy(), want)
        count += 4
    dist.barrier()
    # Async handles: several in flight, completed in order.
    tensors = [tc.full([33], float(rank + i), device=device) for i in range(4)]
    works = [dist.all_reduce(t, "max", async_op=True) for t in tensors]
    for i, (w, t) in enumerate(zip(works, tensors, strict=True)):
        assert w is not None and w.wait()
        assert w.is_completed() and w.is_success()
        np.testing.assert_array_equal(t.numpy(), np.full(33, float(world - 1 + i), np.float32))
    barrier = dist.barrier(async_op=True)
    assert barrier is not None and barrier.wait()
    return {"checked": count, "backend": dist.get_backend(device.split(":")[0])}


def large(device: str, rank: int, world: int, args: list[str]) -> dict[str, object]:
    # 72 MiB of float32 plus a few elements, so chunks do not divide evenly.
    n = 72 * (1 << 20) // 4 + 3
    t = tc.full([n], float(rank + 1), device=device)
    dist.all_reduce(t, "sum")
    got = t.numpy()
    total = world * (world + 1) / 2
    assert got[0] == total and got[-1] == total and np.all(got == total)
    del got
    b = tc.arange(n, dtype=tc.float32, device=device) if rank == 0 else tc.zeros(n, device=device)
    dist.broadcast(b, 0)
    got = b.numpy()
    assert got[-1] == np.float32(n - 1) and np.array_equal(
        got[:1000], np.arange(1000, dtype=np.float32)
    )
    return {"bytes": n * 4}


def mismatch(device: str, rank: int, world: int, args: list[str]) -> dict[str, object]:
    errors = []
    shape = [4] if rank == 1 else [3]
    try:
        dist.all_reduce(tc.ones(shape, device=device))
    except dist.DistError as error:
        errors.append(str(error))
    dtype = tc.float64 if rank == world - 1 else tc.float32
    try:
        dist.broadcast(tc.ones([2], dtype=dtype, device=device), 0)
    except dist.DistError as error:
        errors.append(str(error))
    try:
        if rank == 0:
            dist.barrier()
        else:
            dist.all_reduce(tc.ones([2], device=device))
    except dist.DistError as error:
        errors.append(str(error))
    # The group is still usable: nothing went on the wire.
    t = tc.ones([5], device=device)
    dist.all_reduce(t)
    np.testing.assert_array_equal(t.numpy(), np.full(5, world, np.float32))
    return {"errors": errors}


def dies(device: str, rank: int, world: int, args: list[str]) -> dict[str, object]:
    t = tc.ones([1000], device=device)
    dist.all_reduce(t)  # everybody is here once
    victim = int(args[0])
    if rank == victim:
        os._exit(0)  # dies without a word
    try:
        dist.all_reduce(t)
    except dist.DistError as error:
        first, kind = str(error), type(error).__name__
    else:
        raise AssertionError("all_reduce succeeded without rank " + str(victim))
    try:
        dist.all_reduce(t)
    except dist.DistError as error:
        second = str(error)
    return {"error": first, "type": kind, "then": second}


def stream_order(device: str, rank: int, world: int, args: list[str]) -> dict[str, object]:
    """eccl: the collective waits for earlier work on the stream; later work sees its result."""
    import torch_emu

    assert device.startswith("emu")
    index = tc.device(device).index
    t = tc.ones([64], device=device)
    gate = torch_emu._EMUC._block_stream(index, 0)  # earlier work that has not run yet
    t2 = t * 3  # queued behind the gate
    work = dist.all_reduce(t2, async_op=True)
    after = t2 + 1  # queued behind the collective
    assert work is not None
    held = work.is_completed()  # cannot complete: its input is not computed yet
    gate.open()
    work.wait()
    np.testing.assert_array_equal(after.numpy(), np.full(64, 3 * world + 1, np.float32))
    # A non-default current stream is used too.
    s = torch_emu.Stream(index)
    with tc.stream(s):
        u = tc.full([10], float(rank), device=device)
        dist.all_reduce(u, "max")
        v = u * 2
        got = v.numpy()  # on s: the default stream does not wait for s
    np.testing.assert_array_equal(got, np.full(10, 2.0 * (world - 1), np.float32))
    return {"held": held}


def backend_errors(device: str, rank: int, world: int, args: list[str]) -> dict[str, object]:
    errors = {}
    try:
        dist.all_reduce(tc.ones([2], device="cpu"))
    except dist.DistBackendError as error:
        errors["cpu_on_eccl"] = str(error)
    try:
        dist.all_reduce(tc.ones([2], dtype=tc.int64, device=device), "avg")
    except ValueError as error:
        errors["avg_int"] = str(error)
    try:
        dist.all_gather([tc.ones([2], device=device)], tc.ones([2], device=device))
    except ValueError as error:
        errors["gather_count"] = str(error)
    return errors


def nccl_collectives(device: str, rank: int, world: int, args: list[str]) -> dict[str, object]:
    """nccl on cuda:<rank>: every collective against NumPy, built only from host copies
    (tc.tensor(..., device) and .numpy()), plus one mismatch caught before NCCL."""
    count = 0
    for n in [0, 1, 5, 1000, 100_003]:
        for dtype in DTYPES:
            for op in ["sum", "avg", "max", "min", "product"]:
                if op == "avg" and dtype is np.int64:
                    continue
                data = [_values(n, dtype, r, salt=n) for r in range(world)]
                if op == "product":
                    data = [np.clip(d, -3, 3) for d in data]
                t = tc.tensor(data[rank], device=device)
                dist.all_reduce(t, op)
                np.testing.assert_array_equal(t.numpy(), _expected(op, data), err_msg=f"{op} n={n}")
                count += 1
        for op in ["sum", "product"]:  # bool: "or" and "and", as tcp does
            flags = [_values(n, np.bool_, r, salt=n) for r in range(world)]
            t = tc.tensor(flags[rank], device=device)
            dist.all_reduce(t, op)
            np.testing.assert_array_equal(t.numpy(), _expected(op, flags))
        for src in range(world):
            t = tc.tensor(_values(n, np.float64, rank, salt=src + 7), device=device)
            dist.broadcast(t, src)
            np.testing.assert_array_equal(t.numpy(), _values(n, np.float64, src, salt=src + 7))
        mine = tc.tensor(_values(n, np.float32, rank).reshape(-1, 1), device=device)
        outs = [tc.tensor(np.full((n, 1), -1, np.float32), device=device) for _ in range(world)]
        dist.all_gather(outs, mine)
        for r in range(world):
            np.testing.assert_array_equal(outs[r].numpy()[:, 0], _values(n, np.float32, r))
        for op in ["sum", "max", "avg"]:
            dtype = np.float64 if op == "avg" else np.int64
            inputs = [
                tc.tensor(_values(n, dtype, rank, salt=r + 3), device=device) for r in range(world)
            ]
            out = tc.tensor(np.zeros(n, dtype), device=device)
            dist.reduce_scatter(out, inputs, op)
            want = _expected(op, [_values(n, dtype, q, salt=rank + 3) for q in range(world)])
            np.testing.assert_array_equal(out.numpy(), want)
        count += 6
    tensors = [tc.tensor(np.full(33, rank + i, np.float32), device=device) for i in range(4)]
    works = [dist.all_reduce(t, "max", async_op=True) for t in tensors]
    for i, (w, t) in enumerate(zip(works, tensors, strict=True)):
        assert w is not None and w.wait() and w.is_success()
        np.testing.assert_array_equal(t.numpy(), np.full(33, float(world - 1 + i), np.float32))
    dist.barrier()
    errors = []
    try:
        dist.all_reduce(tc.tensor(np.ones(4 if rank == 1 else 3, np.float32), device=device))
    except dist.DistError as error:
        errors.append(str(error))
    # Caught before anything was queued: the communicator still works.
    t = tc.tensor(np.full(8, rank + 1.0, np.float32), device=device)
    dist.all_reduce(t)
    np.testing.assert_array_equal(t.numpy(), np.full(8, world * (world + 1) / 2, np.float32))
    return {"checked": count, "backend": dist.get_backend("cuda"), "errors": errors}


SCENARIOS: dict[str, Callable[[str, int, int, list[str]], dict[str, object]]] = {
    "collectives": collectives,
    "large": large,
    "mismatch": mismatch,
    "dies": dies,
    "stream_order": stream_order,
    "nccl_collectives": nccl_collectives,
    "backend_errors": backend_errors,
    "join": lambda device, rank, world, args: {},
}


def main(argv: list[str]) -> int:
    scenario, device_type, rank_s, world_s, port, timeout_s, *args = argv
    rank, world = int(rank_s), int(world_s)
    backend = None
    if device_type == "emu":
        import torch_emu  # noqa: F401  (registers eccl)

        device = f"emu:{rank % 2}"
        if scenario == "backend_errors":
            backend = "eccl"
    elif device_type == "cuda":
        import torch_cuda  # noqa: F401  (registers nccl)

        device = f"cuda:{rank}"
    else:
        device = "cpu"
    try:
        dist.init_process_group(
            backend,
            f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=world,
            timeout=float(timeout_s),
        )
    except dist.DistError as error:
        print(json.dumps({"init_error": str(error), "type": type(error).__name__}), flush=True)
        return 3
    result = SCENARIOS[scenario](device, rank, world, args)
    dist.destroy_process_group()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
