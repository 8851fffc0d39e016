"""Counters of the jit (for tests and benchmarks) and once-only warnings."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass


@dataclass
class JitStats:
    traces: int = 0  # functions traced into graphs (one per new guard key)
    compilations: int = 0  # host compiler runs
    memory_hits: int = 0  # kernels found already built in this process
    disk_hits: int = 0  # kernels loaded from the on-disk cache without compiling
    fused_calls: int = 0  # calls that ran a fused kernel
    eager_calls: int = 0  # calls that fell back to eager mode


class _Registry:
    """The process's jit counters and the warnings it already gave."""

    def __init__(self) -> None:
        self.stats = JitStats()
        self.warned: set[str] = set()


_REGISTRY = _Registry()


def counters() -> JitStats:
    """The live counters (mutated by the jit)."""
    return _REGISTRY.stats


def stats() -> dict[str, int]:
    """A snapshot of the counters."""
    return dataclasses.asdict(_REGISTRY.stats)


def reset_stats() -> None:
    """Zeroes the counters and forgets which warnings were given."""
    _REGISTRY.stats = JitStats()
    _REGISTRY.warned.clear()


def warn_once(message: str) -> None:
    """Warns (RuntimeWarning) the first time this process sees ``message``."""
    if message in _REGISTRY.warned:
        return
    _REGISTRY.warned.add(message)
    warnings.warn(message, RuntimeWarning, stacklevel=4)
