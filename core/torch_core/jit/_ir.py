"""The fusion IR: a straight-line SSA graph of element-wise ops over same-shape inputs.

A graph is what a device's fuser compiles. It names no shape (the element
count is a launch argument, so one kernel serves every shape) but fixes the
dtype, which every value shares. Values are numbered in definition order:

    graph(float32, inputs=2):
      %0 = input 0
      %1 = input 1
      %2 = mul %0 %1
      %3 = const 0x1.0000000000000p+1
      %4 = add %2 %3
      %5 = relu %4
      return %5

A graph may end in one full reduction (``sum``), whose result is 0-d.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

BINARY_OPS = ("add", "sub", "mul", "div")
UNARY_OPS = ("neg", "relu", "exp", "tanh")
REDUCTION_OPS = ("sum",)
DTYPES = ("float32", "float64")

_ARITY = {
    **{op: 2 for op in BINARY_OPS},
    **{op: 1 for op in UNARY_OPS},
    **{op: 1 for op in REDUCTION_OPS},
    "input": 0,
    "const": 0,
}


class IRError(ValueError):
    """A graph that breaks the IR's rules (a tracer or hand-built graph bug)."""


@dataclass(frozen=True)
class Node:
    """``%output = op inputs...``; ``input`` nodes carry their argument index
    in ``index``, ``const`` nodes their value in ``value``."""

    op: str
    output: int
    inputs: tuple[int, ...] = ()
    index: int = -1
    value: float = 0.0

    def text(self) -> str:
        if self.op == "input":
            rhs = f"input {self.index}"
        elif self.op == "const":
            rhs = f"const {_const_text(self.value)}"
        else:
            rhs = " ".join([self.op, *(f"%{v}" for v in self.inputs)])
        return f"%{self.output} = {rhs}"


@dataclass(frozen=True)
class Graph:
    dtype: str
    num_inputs: int
    nodes: tuple[Node, ...]
    output: int

    @property
    def reduction(self) -> str | None:
        """The final reduction's op, or None for an element-wise graph."""
        last = self.nodes[-1] if self.nodes else None
        return last.op if last is not None and last.op in REDUCTION_OPS else None

    def text(self) -> str:
        """Canonical text: equal graphs have equal text (and so equal digests)."""
        lines = [f"graph({self.dtype}, inputs={self.num_inputs}):"]
        lines += [f"  {node.text()}" for node in self.nodes]
        lines.append(f"  return %{self.output}")
        return "\n".join(lines) + "\n"

    def digest(self) -> str:
        return hashlib.sha256(self.text().encode()).hexdigest()

    @property
    def kernel_name(self) -> str:
        """The fused kernel's symbol and dispatcher op name: ``fused_<hash>``."""
        return "fused_" + self.digest()[:16]

    def __str__(self) -> str:
        return self.text()


def _const_text(value: float) -> str:
    # Hex floats are exact and C++17 reads them back; inf and nan are spelled out.
    return value.hex() if math.isfinite(value) else repr(value)


def check(graph: Graph) -> None:
    """Raises IRError naming the first broken rule; returns when the graph is valid."""
    if graph.dtype not in DTYPES:
        raise IRError(f"dtype {graph.dtype!r} is not fusible (supported: {', '.join(DTYPES)})")
    if graph.num_inputs < 1:
        raise IRError("a graph needs at least one tensor input")
    defined: set[int] = set()
    seen_inputs: set[int] = set()
    for position, node in enumerate(graph.nodes):
        if node.op not in _ARITY:
            raise IRError(f"%{node.output}: unknown op {node.op!r}")
        if len(node.inputs) != _ARITY[node.op]:
            arity = _ARITY[node.op]
            raise IRError(
                f"%{node.output}: {node.op} takes {arity}, got {len(node.inputs)} operand(s)"
            )
        for operand in node.inputs:
            if operand not in defined:
                raise IRError(f"%{node.output}: operand %{operand} is used before it is defined")
        if node.output in defined:
            raise IRError(f"%{node.output} is defined twice")
        if node.op == "input":
            if not 0 <= node.index < graph.num_inputs or node.index in seen_inputs:
                raise IRError(f"%{node.output}: bad or repeated input index {node.index}")
            seen_inputs.add(node.index)
        if node.op in REDUCTION_OPS and position != len(graph.nodes) - 1:
            raise IRError(f"%{node.output}: {node.op} is not last (only a final reduction fuses)")
        defined.add(node.output)
    if seen_inputs != set(range(graph.num_inputs)):
        raise IRError(
            f"inputs {sorted(set(range(graph.num_inputs)) - seen_inputs)} have no input node"
        )
    if graph.output not in defined:
        raise IRError(f"the returned value %{graph.output} is not defined")
    if graph.nodes[-1].output != graph.output:
        raise IRError(
            "the returned value must be the last node (dead code is pruned before checking)"
        )


def prune(graph: Graph) -> Graph:
    """Drops nodes the output does not depend on (input nodes stay: they are the ABI)."""
    by_output = {node.output: node for node in graph.nodes}
    live: set[int] = set()
    stack = [graph.output]
    while stack:
        value = stack.pop()
        if value in live or value not in by_output:
            continue
        live.add(value)
        stack.extend(by_output[value].inputs)
    kept = [node for node in graph.nodes if node.op == "input" or node.output in live]
    # Renumber densely so that equal computations give equal text.
    renumber = {node.output: i for i, node in enumerate(kept)}
    nodes = tuple(
        Node(
            op=node.op,
            output=renumber[node.output],
            inputs=tuple(renumber[v] for v in node.inputs),
            index=node.index,
            value=node.value,
        )
        for node in kept
    )
    return Graph(graph.dtype, graph.num_inputs, nodes, renumber.get(graph.output, -1))
