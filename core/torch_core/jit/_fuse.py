"""``fuse(fn)``: trace on first call, compile through the device's fuser, guard, reuse."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch_core import _C
from torch_core.jit._guards import GuardKey, guard_key, unfusible_reason
from torch_core.jit._ir import Graph, IRError, check
from torch_core.jit._registry import FusedKernel, get_fuser
from torch_core.jit._stats import counters, warn_once
from torch_core.jit._trace import TraceError, trace

Tensor = _C.Tensor


@dataclass(frozen=True)
class Plan:
    """How calls with one guard key run: a fused kernel, or eagerly and why."""

    kernel: FusedKernel | None
    graph: Graph | None
    reason: str  # "fused as fused_<hash>", or why eager

    @property
    def fused(self) -> bool:
        return self.kernel is not None


class Fused:
    """A function of element-wise ops, run as one fused kernel per guard key.

    Calls with keyword arguments, or arguments other than tensors and Python
    numbers, run eagerly; so do calls the fuser cannot take (see
    ``explain``). Results equal eager results.
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self._lock = threading.Lock()
        self._plans: dict[GuardKey, Plan] = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        plan = None if kwargs else self._plan(args)
        if plan is None or plan.kernel is None:
            counters().eager_calls += 1
            return self.fn(*args, **kwargs)
        counters().fused_calls += 1
        return plan.kernel([arg for arg in args if isinstance(arg, Tensor)])

    def explain(self, *args: Any) -> str:
        """How a call with these arguments runs (tracing and compiling it if needed)."""
        plan = self._plan(args)
        return plan.reason if plan is not None else "eager: arguments cannot be guarded"

    @property
    def graphs(self) -> list[Graph]:
        """The graphs traced so far, one per guard key that fused."""
        with self._lock:
            return [plan.graph for plan in self._plans.values() if plan.graph is not None]

    def _plan(self, args: tuple[Any, ...]) -> Plan | None:
        key = guard_key(args)
        if key is None:
            return None
        with self._lock:
            plan = self._plans.get(key)
        if plan is None:
            plan = self._specialize(args)
            with self._lock:
                plan = self._plans.setdefault(key, plan)
        return plan

    def _specialize(self, args: tuple[Any, ...]) -> Plan:
        reason = unfusible_reason(args)
        if reason is not None:
            return Plan(None, None, f"eager: {reason}")
        first = next(arg for arg in args if isinstance(arg, Tensor))
        device_type = first.device.type
        fuser = get_fuser(device_type)
        if fuser is None:
            return Plan(None, None, f"eager: device type '{device_type}' has no fuser")
        counters().traces += 1
        try:
            graph = trace(self.fn, args, first.dtype.name)
        except TraceError as error:
            warn_once(f"torch_core.jit: cannot fuse {_name(self.fn)}: {error}; it runs eagerly")
            return Plan(None, None, f"eager: {error}")
        try:
            check(graph)
        except IRError as error:
            raise IRError(
                f"torch_core.jit traced an invalid graph from {_name(self.fn)}: {error}\n{graph}"
            ) from error
        kernel = fuser.compile(graph)
        if kernel is None:
            return Plan(None, graph, f"eager: the '{device_type}' fuser declined (see its warning)")
        return Plan(kernel, graph, f"fused as {kernel.name}")


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", repr(fn))


def fuse(fn: Callable[..., Any]) -> Fused:
    """Fuses a function of element-wise ops (and optionally a final full ``sum``).

    Usable as a decorator. Supported ops: add, sub, mul, div (operators and
    methods, with tensors or Python numbers), neg, relu, exp, tanh, sum().
    Tensor arguments must share device, floating dtype (float32/float64) and
    shape; otherwise, and on devices without a fuser, calls run eagerly.
    """
    return Fused(fn)
