"""First contact with a GPU machine: which device, driver and runtime are here.

``tools/dev gpu-check`` runs ``python3 -m torchsplit.gpucheck``: it says which
test passes it will run (:mod:`torchsplit.gpucheck.passes`), reports the
environment as the user set it and the CUDA runtime, driver and devices, and
exits 2, naming the cause, when no CUDA device is usable, so the GPU suite
never skips silently. With a device it runs every pass and reports each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from torchsplit.errors import TorchsplitError

# What changes how the GPU tests run, reported as the user set it.
ENVIRONMENT = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_MODULE_LOADING",
    "CUDA_LAUNCH_BLOCKING",
    "TORCH_CUDA_NVRTC_LIBRARY",
    "TORCH_CUDA_NCCL_LIBRARY",
    "LD_LIBRARY_PATH",
)
# What torch_cuda does with a variable the user left unset.
DEFAULTS = {
    "CUDA_MODULE_LOADING": "torch_cuda sets EAGER in its process",
    "CUDA_LAUNCH_BLOCKING": "the passes set it themselves",
}


def environment_report(environ: Mapping[str, str]) -> list[str]:
    """The variables of ENVIRONMENT as ``environ`` has them.

    Pass the environment as it was before torch_cuda was imported: importing
    it sets CUDA_MODULE_LOADING, which is not the user's choice.
    """
    lines = ["environment (as you set it):"]
    for name in ENVIRONMENT:
        if name in environ:
            value = environ[name] or "(empty)"
        else:
            value = "(unset" + (f": {DEFAULTS[name]})" if name in DEFAULTS else ")")
        lines.append(f"  {name}: {value}")
    return lines


def _version(code: int) -> str:
    """CUDA's integer versions: 13000 -> "13.0", 12080 -> "12.8"."""
    if code <= 0:
        return "none"
    return f"{code // 1000}.{code % 1000 // 10} ({code})"


class NoUsableDevice(TorchsplitError):
    """torch_cuda imports but no CUDA device is usable; ``lines`` is what was found."""

    def __init__(self, reason: str, lines: list[str]) -> None:
        super().__init__(f"no usable CUDA device: {reason}")
        self.lines = lines


def _import_torch_cuda():  # type: ignore[no-untyped-def]
    """torch_cuda, or a TorchsplitError saying whether it is unbuilt or does not load."""
    try:
        import torch_cuda
    except ImportError as error:
        text = str(error)
        if isinstance(error, ModuleNotFoundError) or "cannot import name '_CUDAC'" in text:
            raise TorchsplitError(
                f"torch_cuda is not built ({text}): build it first (tools/dev build)"
            ) from error
        # Built, but a library it links does not load: no rebuild fixes that.
        raise TorchsplitError(
            f"torch_cuda is built but does not load: {text} (_CUDAC finds libcudart through "
            "its RUNPATH, in NVIDIA's runtime wheel or the hermetic toolkit)"
        ) from error
    return torch_cuda


def device_report() -> list[str]:
    """Lines describing the CUDA runtime, the driver, NVRTC, NCCL and every device.

    Raises NoUsableDevice (with the lines so far) when no device is usable, and
    TorchsplitError when torch_cuda does not import.
    """
    torch_cuda = _import_torch_cuda()
    from torch_cuda import distributed, jit

    runtime = int(torch_cuda.runtime_version())
    driver = int(torch_cuda.driver_version())
    library = torch_cuda._CUDAC._runtime_library()
    lines = [
        f"CUDA runtime (linked into _CUDAC): {_version(runtime)}, "
        + (os.path.realpath(library) if library else "linked statically"),
        f"CUDA driver (newest runtime it supports): {_version(driver)}",
        f"NVRTC: {jit.nvrtc_library() or 'not found'}",
        f"NCCL: {distributed.nccl_library() or 'not found'}",
    ]
    count = torch_cuda.device_count()
    if count == 0:
        reason = torch_cuda._CUDAC._unavailable_reason()
        if 0 < driver < runtime:
            reason += (
                f"; the driver supports CUDA {_version(driver)}, "
                f"the runtime needs {_version(runtime)}"
            )
        raise NoUsableDevice(reason, lines)
    for index in range(count):
        props = torch_cuda.get_device_properties(index)
        lines.append(
            f"cuda:{index}: {props.name}, compute capability {props.major}.{props.minor}, "
            f"{props.total_memory // (1 << 20)} MiB, {props.multi_processor_count} SMs"
        )
    return lines
