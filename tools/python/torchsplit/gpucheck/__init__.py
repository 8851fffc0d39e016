"""First contact with a GPU machine: which device, driver and runtime are here.

``tools/dev gpu-check`` runs this first (``python3 -m torchsplit.gpucheck``):
it prints what the run will use and exits 2, naming the cause, when no CUDA
device is usable, so the GPU suite that follows never skips silently.
"""

from __future__ import annotations

import os

from torchsplit.errors import TorchsplitError


def _version(code: int) -> str:
    """CUDA's integer versions: 13000 -> "13.0", 12080 -> "12.8"."""
    if code <= 0:
        return "none"
    return f"{code // 1000}.{code % 1000 // 10} ({code})"


def device_report() -> list[str]:
    """Lines describing the CUDA runtime, the driver and every device.

    Raises TorchsplitError when torch_cuda is not built or no device is usable.
    """
    try:
        import torch_cuda
    except ImportError as error:
        raise TorchsplitError(
            f"torch_cuda does not import ({error}): build it first (tools/dev build)"
        ) from error
    runtime = int(torch_cuda.runtime_version())
    driver = int(torch_cuda.driver_version())
    lines = [
        f"CUDA runtime (linked into _CUDAC): {_version(runtime)}",
        f"CUDA driver (newest runtime it supports): {_version(driver)}",
        f"CUDA_MODULE_LOADING: {os.environ.get('CUDA_MODULE_LOADING', '(unset)')}",
    ]
    count = torch_cuda.device_count()
    if count == 0:
        reason = torch_cuda._CUDAC._unavailable_reason()
        if 0 < driver < runtime:
            reason += (
                f"; the driver supports CUDA {_version(driver)}, "
                f"the runtime needs {_version(runtime)}"
            )
        raise TorchsplitError(
            "gpu-check needs a CUDA device and none is usable: " + reason + "\n" + "\n".join(lines)
        )
    for index in range(count):
        props = torch_cuda.get_device_properties(index)
        lines.append(
            f"cuda:{index}: {props.name}, compute capability {props.major}.{props.minor}, "
            f"{props.total_memory // (1 << 20)} MiB, {props.multi_processor_count} SMs"
        )
    return lines
