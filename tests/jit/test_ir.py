"""The fusion IR, the tracer and the code generator, without compiling."""

from __future__ import annotations

import pytest

import torch_core as tc
from torch_core import jit
from torch_core.jit import Graph, IRError, Node, TraceError


def _trace(fn, *args):
    return jit.trace(fn, list(args), "float32")


def test_trace_records_ssa_with_constants_and_reverse_ops() -> None:
    x, y = tc.ones(4), tc.ones(4)
    graph = _trace(lambda a, b: (2 - a) * b.relu(), x, y)
    assert graph.text() == (
        "graph(float32, inputs=2):\n"
        "  %0 = input 0\n"
        "  %1 = input 1\n"
        "  %2 = const 0x1.0000000000000p+1\n"
        "  %3 = sub %2 %0\n"
        "  %4 = relu %1\n"
        "  %5 = mul %3 %4\n"
        "  return %5\n"
    )
    jit.check(graph)


def test_equal_computations_have_equal_digests_and_dead_code_is_pruned() -> None:
    x, y = tc.ones(4), tc.ones(4)

    def with_dead_code(a, b):
        _unused = (a * 3).exp()
        return a + b

    assert _trace(with_dead_code, x, y).digest() == _trace(lambda p, q: p + q, x, y).digest()
    assert _trace(lambda p, q: p + q, x, y).kernel_name.startswith("fused_")
    assert _trace(lambda p, q: p + q, x, y).digest() != _trace(lambda p, q: q + p, x, y).digest()


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda a: a.softmax(0), "'softmax' is not a fusible op"),
        (lambda a: a.sum() * 2, "only a final reduction"),
        (lambda a: a.sum(0), "only a full sum"),
        (lambda a: a.relu() if a else a, "control flow"),
        (lambda a: a * tc.ones(4), "captured"),
        (lambda a: a, "nothing to fuse"),
        (lambda a: (a, a), "must return one traced tensor"),
    ],
)
def test_untraceable_functions_name_the_problem(fn, message: str) -> None:
    with pytest.raises(TraceError, match=message):
        _trace(fn, tc.ones(4))


def _graph(*nodes: Node, output: int, inputs: int = 1, dtype: str = "float32") -> Graph:
    return Graph(dtype, inputs, tuple(nodes), output)


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        (_graph(Node("input", 0, index=0), Node("pow", 1, (0,)), output=1), "unknown op"),
        (_graph(Node("input", 0, index=0), Node("add", 1, (0,)), output=1), "takes 2"),
        (_graph(Node("input", 0, index=0), Node("neg", 1, (2,)), output=1), "before it is defined"),
        (_graph(Node("input", 0, index=0), Node("neg", 0, (0,)), output=0), "defined twice"),
        (
            _graph(Node("input", 0, index=0), Node("sum", 1, (0,)), Node("neg", 2, (1,)), output=2),
            "not last",
        ),
        (_graph(Node("input", 0, index=0), Node("neg", 1, (0,)), output=1, inputs=2), "no input"),
        (_graph(Node("input", 0, index=0), Node("neg", 1, (0,)), output=1, dtype="int64"), "dtype"),
        (_graph(Node("input", 0, index=0), Node("neg", 1, (0,)), output=7), "not defined"),
    ],
)
def test_check_rejects_broken_graphs(graph: Graph, message: str) -> None:
    with pytest.raises(IRError, match=message):
        jit.check(graph)


def test_codegen_separates_the_target_neutral_body_from_the_host_loop() -> None:
    graph = _trace(lambda a, b: (a * b).tanh().sum(), tc.ones(4), tc.ones(4))
    body = jit.emit_body(graph)
    assert body.startswith(
        "TORCH_OP_QUALIFIERS inline scalar_t fused_body(scalar_t v0, scalar_t v1)"
    )
    assert "at::native::math::mul(v0, v1)" in body
    assert "extern" not in body and "for (" not in body
    wrapper = jit.emit_host_wrapper(graph)
    assert f"void {graph.kernel_name}(const void* const* inputs, void* out, int64_t n)" in wrapper
    assert "double acc = 0;" in wrapper  # the sum accumulates in double, as core's kernel
    source = jit.emit_host_source(graph)
    assert '#include "aten/native/ElementwiseMath.h"' in source
    assert "using scalar_t = float;" in source


def test_guard_keys_tell_numbers_and_tensors_apart() -> None:
    x = tc.ones(2)
    assert jit.guard_key([x, 1]) != jit.guard_key([x, 1.0])
    assert jit.guard_key([x, 0.0]) != jit.guard_key([x, -0.0])
    assert jit.guard_key([x, "text"]) is None
    assert jit.guard_key([x]) != jit.guard_key([tc.ones(3)])
