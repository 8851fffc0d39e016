"""Op checks that only matter on a GPU: multi-block and split reductions, tile
edges of matmul, every copy conversion, transfers larger than a staging chunk.

The op suite itself (every op, dtype and broadcast against NumPy) is
tests/conformance/test_ops.py, which runs on cuda wherever a GPU is present.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import torch_core as tc
import torch_cuda

pytestmark = pytest.mark.gpu

DEV = "cuda:0"
DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}
rng = np.random.default_rng(2024)


def test_full_float32_sum_of_ten_million_takes_the_split_path_and_stays_exact() -> None:
    # outer = inner = 1: one block would leave the GPU idle, so rows split
    # across blocks (grid z) and a second pass adds the partial doubles.
    a = rng.standard_normal(10_000_019).astype(np.float32)
    got = float(tc.tensor(a, device=DEV).sum().numpy())
    expected = float(a.astype(np.float64).sum())
    assert abs(got - expected) <= 1e-3  # float32 rounding of a ~3e3 result is 2.4e-4


def test_int64_sum_is_exact() -> None:
    a = rng.integers(-1000, 1000, size=3_000_001, dtype=np.int64)
    assert int(tc.tensor(a, device=DEV).sum().numpy()) == int(a.sum())


@pytest.mark.parametrize("dim", [0, 1, None])
def test_max_propagates_nan_through_blocks_and_splits(dim) -> None:
    a = rng.standard_normal((1000, 513)).astype(np.float32)
    a[7, 300] = np.nan
    got = tc.tensor(a, device=DEV).max(dim).numpy()
    np.testing.assert_array_equal(got, np.asarray(a.max(axis=dim)))  # NaN where NumPy has NaN


def test_softmax_over_a_long_row() -> None:
    a = (rng.standard_normal((4, 100_000)) * 30).astype(np.float32)
    shifted = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    expected = shifted / shifted.sum(axis=1, keepdims=True)
    got = tc.tensor(a, device=DEV).softmax(1).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(got.astype(np.float64).sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize(
    ("dtype", "shape_a", "shape_b"),
    [
        ("float32", (130, 257), (257, 70)),  # no dimension a multiple of the 32 tile
        ("float64", (3, 67, 45), (45, 33)),  # batch of a, b shared
        ("int64", (2, 40, 33), (2, 33, 50)),
        ("float32", (1, 1), (1, 65)),
        ("float64", (3, 0), (0, 4)),  # k = 0: the empty sum
    ],
)
def test_matmul_tile_edges(dtype, shape_a, shape_b) -> None:
    np_dtype = DTYPES[dtype]
    if np_dtype is np.int64:
        a = rng.integers(-9, 9, size=shape_a, dtype=np.int64)
        b = rng.integers(-9, 9, size=shape_b, dtype=np.int64)
    else:
        a = rng.standard_normal(shape_a).astype(np_dtype)
        b = rng.standard_normal(shape_b).astype(np_dtype)
    got = (tc.tensor(a, device=DEV) @ tc.tensor(b, device=DEV)).numpy()
    expected = a @ b
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if np_dtype is np.int64:
        np.testing.assert_array_equal(got, expected)
    else:
        # Error bound of a dot product: k * eps * sum |a_i b_i|.
        eps = np.finfo(np_dtype).eps
        bound = (np.abs(a) @ np.abs(b)) * (shape_a[-1] + 1) * eps
        assert np.all(np.abs(got - expected) <= bound + np.finfo(np_dtype).tiny)


@pytest.mark.parametrize(("src", "dst"), list(itertools.product(DTYPES, DTYPES)))
def test_copy_converts_every_dtype_pair_and_broadcasts(src, dst) -> None:
    if DTYPES[src] is np.bool_:
        a = rng.random((3, 1, 4)) > 0.5
    else:
        a = (rng.standard_normal((3, 1, 4)) * 10).astype(DTYPES[src])
    out = tc.empty(2, 3, 5, 4, dtype=getattr(tc, dst), device=DEV)
    out.copy_(tc.tensor(a, device=DEV))
    expected = np.broadcast_to(a, (2, 3, 5, 4)).astype(DTYPES[dst])
    np.testing.assert_array_equal(out.numpy(), expected)


def test_transfers_larger_than_the_staging_chunks_round_trip() -> None:
    # 24 MB: six 4 MiB pinned chunks and a partial one, both directions.
    a = rng.standard_normal(3_000_001)
    np.testing.assert_array_equal(tc.tensor(a, device=DEV).numpy(), a)
    s = torch_cuda.Stream()
    with tc.stream(s):  # on a side stream: ordered on it, complete on return
        np.testing.assert_array_equal(tc.tensor(a, device=DEV).numpy(), a)


def test_broadcast_beyond_eight_uncoalescable_dimensions_is_refused() -> None:
    a = tc.ones(*([2, 1] * 5), device=DEV)
    b = tc.ones(*([1, 2] * 5), device=DEV)
    with pytest.raises(ValueError, match="at most 8 non-contiguous dimensions, got 10"):
        a + b


@pytest.mark.skipif(torch_cuda.device_count() < 2, reason="needs two CUDA devices")
def test_copy_between_devices_is_ordered_on_both_streams() -> None:
    a = rng.standard_normal((512, 512)).astype(np.float32)
    x = tc.tensor(a, device="cuda:0") * 2
    y = x.to("cuda:1")  # queued on cuda:1's current stream after x's producer
    assert str(y.device) == "cuda:1"
    np.testing.assert_array_equal(y.numpy(), a * 2)
