"""One rank of the conformance suite's distributed test.

Usage: ``_rank.py PACKAGE RANK WORLD PORT``. Imports the backend (which
registers its process-group backend as its device type's default), runs the
collectives on ``<type>:<rank % device_count>`` and checks them against NumPy;
prints one JSON line.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import torch_core as tc
import torch_core.distributed as dist
from torch_core.testing import adapter_for


def main(package: str, rank: int, world: int, port: int) -> int:
    adapter = adapter_for(package)
    adapter.load()
    device = adapter.device(rank % adapter.device_count())
    init = f"tcp://127.0.0.1:{port}"
    dist.init_process_group(None, init, rank=rank, world_size=world, timeout=60)
    data = [np.arange(1000, dtype=np.float32) * (r + 1) for r in range(world)]
    t = tc.tensor(data[rank], device=device)
    dist.all_reduce(t, "sum")
    np.testing.assert_array_equal(t.numpy(), sum(data))
    t = tc.tensor(data[rank], device=device)
    dist.all_reduce(t, "max")
    np.testing.assert_array_equal(t.numpy(), np.max(data, axis=0))
    b = tc.full((7,), float(rank), dtype=tc.float64, device=device)
    dist.broadcast(b, 1)
    np.testing.assert_array_equal(b.numpy(), np.full(7, 1.0))
    outs = [tc.zeros(5, dtype=tc.int64, device=device) for _ in range(world)]
    dist.all_gather(outs, tc.full((5,), rank, dtype=tc.int64, device=device))
    for r, out in enumerate(outs):
        np.testing.assert_array_equal(out.numpy(), np.full(5, r))
    dist.barrier()
    serving = [n for n, types in dist.registered_backends().items() if adapter.device_type in types]
    backend = ",".join(serving)
    dist.destroy_process_group()
    print(json.dumps({"device": device, "backend": backend}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
