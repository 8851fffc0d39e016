"""GPU test setup: every kernel is loaded before the first test runs.

With lazy module loading, the first launch of a kernel waits for the device
to drain, so a test that queues work behind a long kernel and then launches a
kernel for the first time in the process would see its streams serialised.
torch_cuda asks for eager loading when it is imported (CUDA_MODULE_LOADING);
the warm-up below also covers a process where something else initialised the
CUDA runtime first.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _warm_up_cuda_kernels(request: pytest.FixtureRequest) -> None:
    if not any(item.get_closest_marker("gpu") for item in request.session.items):
        return
    import torch_cuda

    if torch_cuda.device_count() == 0:
        return
    import torch_core as tc

    for index in range(torch_cuda.device_count()):
        device = f"cuda:{index}"
        for dtype in (tc.float32, tc.float64, tc.int64):
            a = tc.ones((4, 4), dtype=dtype, device=device)
            for out in (a + a, a - a, a * a, a / a, -a, a.relu(), a.sum(), a.max(), a @ a):
                out.numpy()
            if dtype != tc.int64:
                for out in (a.exp(), a.tanh(), a.softmax(-1)):
                    out.numpy()
            tc.ones(1 << 20, dtype=dtype, device=device).sum().numpy()  # the two-pass reduction
            a.to(tc.bool).numpy()
        torch_cuda.synchronize(index)
