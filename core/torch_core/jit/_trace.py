"""Tracing: run the user's function on proxies that record each op into a Graph."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch_core import _C
from torch_core.jit._ir import BINARY_OPS, Graph, Node, prune

Tensor = _C.Tensor


class TraceError(TypeError):
    """The function does something the fuser cannot record (it then runs eagerly)."""


class _Recorder:
    def __init__(self) -> None:
        self.nodes: list[Node] = []

    def emit(
        self, op: str, inputs: tuple[int, ...] = (), *, index: int = -1, value: float = 0.0
    ) -> int:
        output = len(self.nodes)
        self.nodes.append(Node(op=op, output=output, inputs=inputs, index=index, value=value))
        return output


class Proxy:
    """Stands for a tensor during tracing; supports the fusible ops only.

    ``shape``, ``dtype`` and ``device`` are the example input's (the guards
    make them constants of the trace).
    """

    __slots__ = ("_recorder", "_reduced", "_value", "device", "dtype", "shape")

    def __init__(
        self, recorder: _Recorder, value: int, example: Tensor, reduced: bool = False
    ) -> None:
        self._recorder = recorder
        self._value = value
        self._reduced = reduced
        self.shape = () if reduced else tuple(example.shape)
        self.dtype = example.dtype
        self.device = example.device

    # -- recording -------------------------------------------------------------
    def _use(self) -> int:
        if self._reduced:
            raise TraceError(
                "the result of a reduction is used again: only a final reduction fuses"
            )
        return self._value

    def _operand(self, other: Any) -> int:
        if isinstance(other, Proxy):
            if other._recorder is not self._recorder:
                raise TraceError("values of two different traces are mixed")
            return other._use()
        if isinstance(other, bool | int | float):
            return self._recorder.emit("const", value=float(other))
        if isinstance(other, Tensor):
            raise TraceError(
                "a tensor that is not an argument of the fused function (captured) cannot be fused"
            )
        raise TraceError(f"operand of type {type(other).__name__} is not fusible")

    def _new(self, value: int, reduced: bool = False) -> Proxy:
        proxy = Proxy.__new__(Proxy)
        proxy._recorder = self._recorder
        proxy._value = value
        proxy._reduced = reduced
        proxy.shape = () if reduced else self.shape
        proxy.dtype = self.dtype
        proxy.device = self.device
        return proxy

    def _binary(self, op: str, other: Any, reverse: bool = False) -> Proxy:
        a, b = self._use(), self._operand(other)
        if reverse:
            a, b = b, a
        return self._new(self._recorder.emit(op, (a, b)))

    def _unary(self, op: str) -> Proxy:
        return self._new(self._recorder.emit(op, (self._use(),)))

    # -- the fusible ops -------------------------------------------------------
    def add(self, other: Any) -> Proxy:
        return self._binary("add", other)

    def sub(self, other: Any) -> Proxy:
        return self._binary("sub", other)

    def mul(self, other: Any) -> Proxy:
        return self._binary("mul", other)

    def div(self, other: Any) -> Proxy:
        return self._binary("div", other)

    __add__ = add
    __sub__ = sub
    __mul__ = mul
    __truediv__ = div

    def __radd__(self, other: Any) -> Proxy:
        return self._binary("add", other, reverse=True)

    def __rsub__(self, other: Any) -> Proxy:
        return self._binary("sub", other, reverse=True)

    def __rmul__(self, other: Any) -> Proxy:
        return self._binary("mul", other, reverse=True)

    def __rtruediv__(self, other: Any) -> Proxy:
        return self._binary("div", other, reverse=True)

    def neg(self) -> Proxy:
        return self._unary("neg")

    __neg__ = neg

    def relu(self) -> Proxy:
        return self._unary("relu")

    def exp(self) -> Proxy:
        return self._unary("exp")

    def tanh(self) -> Proxy:
        return self._unary("tanh")

    def sum(self, dim: int | None = None, keepdim: bool = False) -> Proxy:
        if dim is not None or keepdim:
            raise TraceError("only a full sum (no dim, no keepdim) fuses")
        return self._new(self._recorder.emit("sum", (self._use(),)), reduced=True)

    # -- everything else stops the trace ----------------------------------------
    def __getattr__(self, name: str) -> Any:
        raise TraceError(f"'{name}' is not a fusible op (fusible: {', '.join(_FUSIBLE)})")

    def __bool__(self) -> bool:
        raise TraceError("control flow on tensor values cannot be traced")

    def __matmul__(self, other: Any) -> Any:
        raise TraceError("'matmul' is not a fusible op")

    def __repr__(self) -> str:
        return f"Proxy(%{self._value})"


_FUSIBLE = (*BINARY_OPS, "neg", "relu", "exp", "tanh", "sum")


def trace(fn: Callable[..., Any], args: Sequence[Any], dtype: str) -> Graph:
    """Runs ``fn`` with a Proxy for every Tensor argument (numbers are passed as they are).

    Returns the pruned graph of the returned proxy; raises TraceError when the
    function does anything the IR cannot express.
    """
    recorder = _Recorder()
    call_args: list[Any] = []
    num_inputs = 0
    for arg in args:
        if isinstance(arg, Tensor):
            value = recorder.emit("input", index=num_inputs)
            call_args.append(Proxy(recorder, value, arg))
            num_inputs += 1
        else:
            call_args.append(arg)
    result = fn(*call_args)
    if not isinstance(result, Proxy) or result._recorder is not recorder:
        raise TraceError(f"the function must return one traced tensor, got {type(result).__name__}")
    if recorder.nodes[result._value].op == "input":
        raise TraceError("the function returns an argument unchanged: nothing to fuse")
    return prune(Graph(dtype, num_inputs, tuple(recorder.nodes), result._value))
