"""How this build's CPU kernels run: torch_core.config() and the thread count."""

from __future__ import annotations

from typing import Any

from torch_core import _C


def config() -> dict[str, Any]:
    """The CPU kernels' configuration.

    ``cpu_capability`` is the instruction set the vectorised kernels run with
    ("default" = baseline x86-64, "avx2", "avx512"): the best of
    ``cpu_capabilities_supported``, or the one ``TORCH_CORE_CPU_CAPABILITY``
    names. ``blas`` is the BLAS matmul calls (``blas_enabled`` is False with
    ``TORCH_CORE_BLAS=0``: blocked kernels instead), ``blas_config`` its own
    build description, ``num_threads`` the threads a CPU op may use.
    """
    return dict(_C._cpu_config())


def get_num_threads() -> int:
    """Threads a CPU op may use (the BLAS's; elementwise ops and reductions use one)."""
    return int(_C.get_num_threads())


def set_num_threads(threads: int) -> None:
    """Sets the threads a CPU op may use, as ``torch.set_num_threads``."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"set_num_threads: expected an int, got {type(threads).__name__}")
    _C.set_num_threads(threads)
