"""torch_core.jit: fusion of element-wise functions into one kernel per device.

``fuse(fn)`` traces ``fn`` on its first arguments into a small SSA graph
(:mod:`torch_core.jit._ir`), checks it, and asks the arguments' device type
for its fuser; guards (dtype, shape and device of every tensor, type and value
of every number) retrace when they change. Devices register fusers by name
(:func:`register_fuser`); the CPU's generates C++ compiled by the host
compiler into a content-keyed cache (see docs/seams/jit.md). Devices without
a fuser, and calls the fuser cannot take, run eagerly with equal results.
"""

from torch_core.jit._cache import CACHE_ENV, cache_dir, kernel_cache
from torch_core.jit._codegen import emit_body, emit_host_source, emit_host_wrapper
from torch_core.jit._compiler import (
    COMPILER_ENV,
    CompilerUnavailable,
    HostCompiler,
    JitCompileError,
    find_host_compiler,
)
from torch_core.jit._fuse import Fused, Plan, fuse
from torch_core.jit._guards import guard_key, unfusible_reason
from torch_core.jit._host import DispatchedKernel, HostCodeFuser
from torch_core.jit._ir import Graph, IRError, Node, check
from torch_core.jit._registry import (
    FusedKernel,
    Fuser,
    get_fuser,
    register_fuser,
    registered_fusers,
)
from torch_core.jit._stats import reset_stats, stats
from torch_core.jit._trace import TraceError, trace

register_fuser("cpu", HostCodeFuser("cpu"))

__all__ = [
    "CACHE_ENV",
    "COMPILER_ENV",
    "CompilerUnavailable",
    "DispatchedKernel",
    "Fused",
    "FusedKernel",
    "Fuser",
    "Graph",
    "HostCodeFuser",
    "HostCompiler",
    "IRError",
    "JitCompileError",
    "Node",
    "Plan",
    "TraceError",
    "cache_dir",
    "check",
    "emit_body",
    "emit_host_source",
    "emit_host_wrapper",
    "find_host_compiler",
    "fuse",
    "get_fuser",
    "guard_key",
    "kernel_cache",
    "register_fuser",
    "registered_fusers",
    "reset_stats",
    "stats",
    "trace",
    "unfusible_reason",
]
