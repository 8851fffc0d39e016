"""ops: every core op on the backend's device matches NumPy (shapes, dtypes, broadcasting).

A backend lacking an op declares ``ops.<name>`` unsupported in its adapter,
with the reason; anything else it lacks fails here.
"""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
from torch_core.testing import BackendAdapter

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}
rng = np.random.default_rng(1234)


def random_array(shape: tuple[int, ...], np_dtype: type) -> np.ndarray:
    if np_dtype is np.bool_:
        return rng.random(shape) > 0.5
    if np_dtype is np.int64:
        return rng.integers(-50, 50, size=shape, dtype=np.int64)
    return rng.standard_normal(shape).astype(np_dtype)


@pytest.fixture
def device(backend: BackendAdapter) -> str:
    return backend.device(0)


def uses(backend: BackendAdapter, *ops: str) -> None:
    """Skips when the backend declares one of ``ops`` unsupported (with its reason)."""
    for op in ops:
        why = backend.lacks(f"ops.{op}")
        if why:
            pytest.skip(f"{backend.device_type} lacks op {op}: {why}")


def check(result: tc.Tensor, expected: np.ndarray, device: str) -> None:
    assert str(result.device) == device
    got = result.numpy()
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if np.issubdtype(expected.dtype, np.floating):
        tol = 1e-5 if expected.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, expected)


BROADCAST_SHAPES = [
    ((5,), (5,)),
    ((3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((1,), (2, 3)),
    ((), (3, 2)),
    ((4, 1, 3), (1, 5, 1)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize(("shape_a", "shape_b"), BROADCAST_SHAPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_ops_broadcast_like_numpy(backend, device, dtype, shape_a, shape_b, op) -> None:
    uses(backend, op, "fill", "copy")
    np_dtype = DTYPES[dtype]
    a = random_array(shape_a, np_dtype)
    b = random_array(shape_b, np_dtype)
    if op == "div":
        b = np.where(b == 0, 1, b).astype(np_dtype)
    ta = tc.tensor(a, device=device)
    tb = tc.tensor(b, device=device)
    expected = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": np.true_divide,
    }[op](a, b)
    if op == "div" and dtype == "int64":
        expected = expected.astype(np.float32)  # true division gives the default float dtype
    check(getattr(tc, op)(ta, tb), expected, device)


def test_bool_add_and_mul_are_logical(backend, device) -> None:
    uses(backend, "add", "mul")
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    check(tc.tensor(a, device=device) + tc.tensor(b, device=device), a | b, device)
    check(tc.tensor(a, device=device) * tc.tensor(b, device=device), a & b, device)


def test_python_operators_and_scalars_promote_like_pytorch(backend, device) -> None:
    uses(backend, "add", "mul", "sub", "div", "neg", "fill")
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = tc.tensor(a, device=device)
    check(t + 2, a + 2, device)  # int scalar keeps int64
    check(t * 1.5, (a * 1.5).astype(np.float32), device)  # float scalar -> float32
    check(10 - t, 10 - a, device)
    check(1 / (t + 1), (1 / (a + 1)).astype(np.float32), device)
    check(-t, -a, device)
    f = rng.standard_normal((3, 3)).astype(np.float64)
    check(tc.tensor(f, device=device) * 2.0, f * 2.0, device)  # float64 stays float64
    check(tc.tensor(np.array([True, False]), device=device) + 1, np.array([2, 1]), device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_unary_ops(backend, device, dtype) -> None:
    uses(backend, "neg", "relu", "exp", "tanh")
    np_dtype = DTYPES[dtype]
    a = random_array((3, 7), np_dtype)
    t = tc.tensor(a, device=device)
    check(t.neg(), -a, device)
    check(t.relu(), np.maximum(a, 0).astype(np_dtype), device)
    float_a = a if dtype != "int64" else a.astype(np.float32)  # ints promote to float32
    check(t.exp(), np.exp(float_a), device)
    check(t.tanh(), np.tanh(float_a), device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_and_max(backend, device, dtype, dim, keepdim) -> None:
    uses(backend, "sum", "max")
    np_dtype = DTYPES[dtype]
    a = random_array((4, 5, 3), np_dtype)
    t = tc.tensor(a, device=device)
    expected_sum = a.sum(axis=dim, keepdims=keepdim)
    if dtype == "bool":
        expected_sum = expected_sum.astype(np.int64)
    check(t.sum(dim, keepdim), np.asarray(expected_sum), device)
    check(t.max(dim, keepdim), np.asarray(a.max(axis=dim, keepdims=keepdim)), device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [None, 0, 2])
def test_mean(backend, device, dtype, dim) -> None:
    uses(backend, "mean", "sum")
    np_dtype = DTYPES[dtype]
    a = random_array((4, 5, 3), np_dtype)
    check(tc.tensor(a, device=device).mean(dim), np.asarray(a.mean(axis=dim)), device)


def test_float32_sum_of_many_elements_keeps_precision(backend, device) -> None:
    uses(backend, "sum")
    a = np.full(1_000_000, 0.1, dtype=np.float32)
    got = tc.tensor(a, device=device).sum().numpy()
    assert abs(float(got) - 100000.0) < 0.1  # naive float32 accumulation is off by ~1000


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_is_max_subtracted(backend, device, dtype, dim) -> None:
    uses(backend, "softmax")
    np_dtype = DTYPES[dtype]
    a = (random_array((3, 4, 5), np_dtype) * 50).astype(np_dtype)
    a[0, 0, 0] = 1000  # exp(1000) overflows without the max subtraction
    shifted = np.exp(a.astype(np.float64) - a.max(axis=dim, keepdims=True))
    expected = (shifted / shifted.sum(axis=dim, keepdims=True)).astype(np_dtype)
    got = tc.tensor(a, device=device).softmax(dim)
    assert np.isfinite(got.numpy()).all()
    check(got, expected, device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((2, 3, 4), (4, 6)),
        ((3, 4), (2, 4, 2)),
        ((1, 1), (1, 1)),
    ],
)
def test_matmul(backend, device, dtype, shape_a, shape_b) -> None:
    uses(backend, "matmul")
    np_dtype = DTYPES[dtype]
    a = random_array(shape_a, np_dtype)
    b = random_array(shape_b, np_dtype)
    check(tc.tensor(a, device=device) @ tc.tensor(b, device=device), a @ b, device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_propagates_nan_like_pytorch(backend, device, dtype) -> None:
    uses(backend, "relu")
    a = np.array([np.nan, -1.0, 0.0, 2.0, -np.inf, np.inf], dtype=DTYPES[dtype])
    check(
        tc.tensor(a, device=device).relu(), np.array([np.nan, 0, 0, 2, 0, np.inf], a.dtype), device
    )


def test_fill_and_copy_in_place(backend, device) -> None:
    uses(backend, "fill", "copy")
    t = tc.empty(2, 3, device=device)
    t.fill_(2.5)
    check(t, np.full((2, 3), 2.5, dtype=np.float32), device)
    src = tc.tensor(np.array([1, 2, 3], dtype=np.int64))  # other device, dtype, broadcast
    t.copy_(src)
    check(t, np.array([[1, 2, 3], [1, 2, 3]], dtype=np.float32), device)


# Each case names the ops it runs (besides fill, which makes its operands), so
# a backend lacking one op skips that op's cases only.
ERROR_CASES = [
    (
        "add",
        "t + tc.ones(4, device=d)",
        ValueError,
        r"add: shapes \(2, 3\) and \(4,\) cannot be broadcast",
    ),
    (
        "matmul",
        "t @ t",
        ValueError,
        r"matmul: shapes \(2, 3\) and \(2, 3\) are not aligned \(3 != 2\)",
    ),
    ("sum", "t.sum(3)", ValueError, r"sum: dim 3 is out of range for a tensor of 2 dimension\(s\)"),
    (
        "mean",
        "tc.arange(3, device=d).mean()",
        ValueError,
        "mean: expected a floating dtype, got int64",
    ),
    (
        "softmax",
        "tc.arange(3, device=d).softmax(0)",
        ValueError,
        "softmax: expected a floating dtype, got int64",
    ),
    ("sub", "b - b", ValueError, "sub: subtracting bool tensors is not supported"),
    ("neg", "-b", ValueError, "neg: not supported for bool tensors"),
    ("add", "t + 'x'", TypeError, "expected a Tensor or a Python number, got str"),
    ("add", "t + tc.ones(2, 3)", ValueError, "expected all tensors on the same device"),
    (
        "max",
        "tc.empty(0).max()",
        ValueError,
        "max: a reduction over an empty dimension has no identity",
    ),
]


@pytest.mark.parametrize(
    ("op", "expr", "error", "message"),
    ERROR_CASES,
    ids=[f"{c[0]}{i}" for i, c in enumerate(ERROR_CASES)],
)
def test_errors_name_the_op_and_the_problem(backend, device, op, expr, error, message) -> None:
    uses(backend, "fill", "copy", op)
    d = device
    t = tc.ones(2, 3, device=d)
    b = tc.tensor([True, False], device=d)
    if device == "cpu" and "same device" in message:
        pytest.skip("the CPU is the other device of this case")
    with pytest.raises(error, match=message):
        eval(expr, {"tc": tc, "t": t, "b": b, "d": d})


def test_an_unsupported_op_skips_only_its_own_error_cases() -> None:
    """Marking ops.matmul unsupported must not hide the other ops' error tests."""
    lacking = BackendAdapter(device_type="x", package="x", unsupported={"ops.matmul": "no GEMM"})
    skipped = []
    for op, *_ in ERROR_CASES:
        try:
            uses(lacking, "fill", "copy", op)
        except pytest.skip.Exception:
            skipped.append(op)
    assert skipped == ["matmul"]


def test_every_core_op_has_a_kernel_or_a_reason(backend: BackendAdapter) -> None:
    # fused_<hash> ops are registered per device at run time by torch_core.jit.
    def kernels(device_type: str) -> set[str]:
        return {op for op in tc._C.kernel_ops(device_type) if not op.startswith("fused_")}

    missing = kernels("cpu") - kernels(backend.device_type)
    unexplained = sorted(op for op in missing if backend.lacks(f"ops.{op}") is None)
    assert unexplained == [], f"{backend.device_type}: no kernel and no reason for {unexplained}"
