// The CPU's vectorised kernels, compiled once per CPU capability (baseline
// x86-64, AVX2, AVX-512: core/BUILD.bazel's cpu_kernels) with CPU_CAPABILITY
// naming the build; CpuCapability.cpp picks one table at run time. Loops run
// over contiguous inner runs in whole vectors, with a partial vector for the
// tail; floating-point sums are blocked (vector partial sums per block, the
// blocks added in double) so a float32 sum of millions of elements keeps its
// precision. Nothing here calls an inline function of another header (see
// KernelTable.h): only this capability's own namespace and compiler builtins.

#include "aten/native/cpu/KernelTable.h"
#include "aten/native/cpu/Vec.h"
#include "aten/native/cpu/VecMath.h"

namespace at::native::CPU_CAPABILITY {
namespace {

using cpu::BinaryLoop;
using cpu::Matmul;
using cpu::Reduction;

template <typename T>
constexpr bool kFloating = false;
template <>
constexpr bool kFloating<float> = true;
template <>
constexpr bool kFloating<double> = true;

// What a sum accumulates in: double for floating types, int64 for int64.
template <typename T>
struct SumAccOf {
  using type = double;
};
template <>
struct SumAccOf<int64_t> {
  using type = int64_t;
};
template <typename T>
using SumAcc = typename SumAccOf<T>::type;

// ---- element-wise ------------------------------------------------------------

struct AddOp {
  template <typename V>
  static V apply(V a, V b) {
    return a + b;
  }
};
struct SubOp {
  template <typename V>
  static V apply(V a, V b) {
    return a - b;
  }
};
struct MulOp {
  template <typename V>
  static V apply(V a, V b) {
    return a * b;
  }
};
struct DivOp {
  template <typename V>
  static V apply(V a, V b) {
    return a / b;
  }
};

// out[0, n) = a (op) b, where a stride of 0 repeats that operand's one element.
template <typename Op, typename T>
void binary_run(int64_t n, const T* a, int64_t sa, const T* b, int64_t sb, T* out) {
  constexpr int64_t L = kLanes<T>;
  int64_t i = 0;
  if (sa != 0 && sb != 0) {
    for (; i + 2 * L <= n; i += 2 * L) {
      store(out + i, Op::apply(load(a + i), load(b + i)));
      store(out + i + L, Op::apply(load(a + i + L), load(b + i + L)));
    }
    for (; i + L <= n; i += L) {
      store(out + i, Op::apply(load(a + i), load(b + i)));
    }
    if (i < n) {
      store_partial(out + i, Op::apply(load_partial(a + i, n - i), load_partial(b + i, n - i)), n - i);
    }
  } else if (sa != 0) {
    const Vec<T> vb = splat(*b);
    for (; i + 2 * L <= n; i += 2 * L) {
      store(out + i, Op::apply(load(a + i), vb));
      store(out + i + L, Op::apply(load(a + i + L), vb));
    }
    for (; i + L <= n; i += L) {
      store(out + i, Op::apply(load(a + i), vb));
    }
    if (i < n) {
      store_partial(out + i, Op::apply(load_partial(a + i, n - i), vb), n - i);
    }
  } else if (sb != 0) {
    const Vec<T> va = splat(*a);
    for (; i + 2 * L <= n; i += 2 * L) {
      store(out + i, Op::apply(va, load(b + i)));
      store(out + i + L, Op::apply(va, load(b + i + L)));
    }
    for (; i + L <= n; i += L) {
      store(out + i, Op::apply(va, load(b + i)));
    }
    if (i < n) {
      store_partial(out + i, Op::apply(va, load_partial(b + i, n - i)), n - i);
    }
  } else {
    const T value = Op::apply(*a, *b);
    for (; i < n; ++i) {
      out[i] = value;
    }
  }
}

// Walks the loop's outer dimensions (an odometer over index[]) and runs the
// inner one as a vector loop.
template <typename Op, typename T>
void binary_kernel(const BinaryLoop& loop, const void* a_, const void* b_, void* out_) {
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  T* out = static_cast<T*>(out_);
  const int inner = loop.ndim - 1;
  const int64_t n = loop.shape[inner];
  int64_t rows = 1;
  for (int d = 0; d < inner; ++d) {
    rows *= loop.shape[d];
  }
  int64_t index[cpu::kMaxLoopDims] = {};
  int64_t oa = 0;
  int64_t ob = 0;
  for (int64_t row = 0; row < rows; ++row) {
    binary_run<Op>(n, a + oa, loop.stride_a[inner], b + ob, loop.stride_b[inner], out + row * n);
    for (int d = inner - 1; d >= 0; --d) {
      if (++index[d] < loop.shape[d]) {
        oa += loop.stride_a[d];
        ob += loop.stride_b[d];
        break;
      }
      oa -= loop.stride_a[d] * (loop.shape[d] - 1);
      ob -= loop.stride_b[d] * (loop.shape[d] - 1);
      index[d] = 0;
    }
  }
}

struct NegOp {
  template <typename V>
  static V apply(V a) {
    return -a;
  }
};
// NaN < 0 is false: NaN passes through, as in PyTorch.
struct ReluOp {
  template <typename V>
  static V apply(V a) {
    return a < V{} ? V{} : a;
  }
};
struct ExpOp {
  template <typename V>
  static V apply(V a) {
    return vexp(a);
  }
};
struct TanhOp {
  template <typename V>
  static V apply(V a) {
    return vtanh(a);
  }
};

template <typename Op, typename T>
void unary_kernel(int64_t n, const void* in_, void* out_) {
  const T* in = static_cast<const T*>(in_);
  T* out = static_cast<T*>(out_);
  constexpr int64_t L = kLanes<T>;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    store(out + i, Op::apply(load(in + i)));
    store(out + i + L, Op::apply(load(in + i + L)));
  }
  for (; i + L <= n; i += L) {
    store(out + i, Op::apply(load(in + i)));
  }
  if (i < n) {
    store_partial(out + i, Op::apply(load_partial(in + i, n - i)), n - i);
  }
}

// ---- reductions --------------------------------------------------------------

// Vector partial sums widened to SumAcc: float32 lanes become double lanes.
template <typename T>
struct Widened {
  Vec<T> acc = {};
  void add(Vec<T> v) { acc += v; }
  SumAcc<T> total() const { return reduce_add(acc); }
  void store_to(T* out, int64_t lanes) const { store_partial(out, acc, lanes); }
};
template <>
struct Widened<float> {
  Vec<double> lo = {};
  Vec<double> hi = {};
  void add(Vec<float> v) {
    typename VecTypes<float>::half h0;
    typename VecTypes<float>::half h1;
    __builtin_memcpy(&h0, &v, sizeof(h0));
    __builtin_memcpy(&h1, reinterpret_cast<const char*>(&v) + sizeof(h0), sizeof(h1));
    lo += __builtin_convertvector(h0, Vec<double>);
    hi += __builtin_convertvector(h1, Vec<double>);
  }
  double total() const { return reduce_add(lo) + reduce_add(hi); }
  void store_to(float* out, int64_t lanes) const {
    for (int64_t j = 0; j < lanes; ++j) {
      out[j] = static_cast<float>(j < kLanes<double> ? lo[j] : hi[j - kLanes<double>]);
    }
  }
};

// Blocked summation: a block is summed in four vector accumulators of T, each
// lane adding kPerLane values whatever the vector width, and each block's
// partial sums are added, lane by lane, in SumAcc (float32 -> double).
constexpr int64_t kPerLane = 16;

template <typename T>
SumAcc<T> sum_contiguous(const T* p, int64_t n) {
  constexpr int64_t L = kLanes<T>;
  constexpr int64_t kBlock = kPerLane * 4 * L;
  Widened<T> total;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    Vec<T> s0 = {};
    Vec<T> s1 = {};
    Vec<T> s2 = {};
    Vec<T> s3 = {};
    for (int64_t j = i; j < i + kBlock; j += 4 * L) {
      s0 += load(p + j);
      s1 += load(p + j + L);
      s2 += load(p + j + 2 * L);
      s3 += load(p + j + 3 * L);
    }
    total.add((s0 + s1) + (s2 + s3));
  }
  // The last partial block, one vector at a time (fewer than kBlock elements).
  Vec<T> s = {};
  for (; i + L <= n; i += L) {
    s += load(p + i);
  }
  if (i < n) {
    s += load_partial(p + i, n - i);
  }
  total.add(s);
  return total.total();
}

// Sums of `lanes` (<= one vector) adjacent columns over many rows, in SumAcc.
template <typename T>
struct ColumnSum {
  Widened<T> acc;
  void add(const T* row, int64_t lanes) { acc.add(lanes == kLanes<T> ? load(row) : load_partial(row, lanes)); }
  void store_to(T* out, int64_t lanes) const { acc.store_to(out, lanes); }
};

// Runs a reduction over [outer, size, inner] into out[outer, inner]: `row(p)`
// reduces each contiguous row when inner == 1; otherwise `columns(p, lanes,
// dst)` reduces `lanes` (<= one vector) adjacent columns starting at p, whose
// rows are r.inner apart, vectorising across the contiguous inner dimension.
template <typename T, typename Row, typename Columns>
void for_each_reduction(const Reduction& r, const void* in_, void* out_, Row&& row, Columns&& columns) {
  const T* in = static_cast<const T*>(in_);
  T* out = static_cast<T*>(out_);
  if (r.inner == 1) {
    for (int64_t o = 0; o < r.outer; ++o) {
      out[o] = row(in + o * r.size);
    }
    return;
  }
  for (int64_t o = 0; o < r.outer; ++o) {
    for (int64_t j = 0; j < r.inner; j += kLanes<T>) {
      columns(in + o * r.size * r.inner + j, scalar_min(kLanes<T>, r.inner - j), out + o * r.inner + j);
    }
  }
}

template <typename T>
void sum_kernel(const Reduction& r, const void* in, void* out) {
  for_each_reduction<T>(
      r, in, out, [&](const T* p) { return static_cast<T>(sum_contiguous(p, r.size)); },
      [&](const T* p, int64_t lanes, T* dst) {
        ColumnSum<T> acc;
        for (int64_t s = 0; s < r.size; ++s) {
          acc.add(p + s * r.inner, lanes);
        }
        acc.store_to(dst, lanes);
      });
}

// Maximum of n >= 1 contiguous elements; NaN if any is NaN (PyTorch, NumPy).
template <typename T>
T max_contiguous(const T* p, int64_t n) {
  constexpr int64_t L = kLanes<T>;
  if (n < L) {
    T best = p[0];
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      nan = nan || p[i] != p[i];
      best = scalar_max(best, p[i]);
    }
    if constexpr (kFloating<T>) {
      if (nan) {
        return __builtin_nan("");
      }
    }
    return best;
  }
  Vec<T> best = load(p);
  Mask<T> nan = best != best;
  int64_t i = L;
  for (; i + L <= n; i += L) {
    const Vec<T> v = load(p + i);
    nan |= v != v;
    best = maximum(best, v);
  }
  if (i < n) {
    // The last full vector, overlapping what was already seen: max is idempotent.
    const Vec<T> v = load(p + n - L);
    nan |= v != v;
    best = maximum(best, v);
  }
  if constexpr (kFloating<T>) {
    if (any(nan)) {
      return __builtin_nan("");
    }
  }
  return reduce_max<T>(best);
}

template <typename T>
void max_kernel(const Reduction& r, const void* in, void* out) {
  for_each_reduction<T>(
      r, in, out, [&](const T* p) { return max_contiguous(p, r.size); },
      [&](const T* p, int64_t lanes, T* dst) {
        Vec<T> best = load_partial(p, lanes);
        Mask<T> nan = best != best;
        for (int64_t s = 1; s < r.size; ++s) {
          const Vec<T> v = load_partial(p + s * r.inner, lanes);
          nan |= v != v;
          best = maximum(best, v);
        }
        if constexpr (kFloating<T>) {
          best = select<T>(nan, splat(static_cast<T>(__builtin_nan(""))), best);
        }
        store_partial(dst, best, lanes);
      });
}

// Max-subtracted softmax along `size`: the max, then exp(x - max) stored and
// summed, then one multiply by the reciprocal of the sum.
template <typename T>
void softmax_kernel(const Reduction& r, const void* in_, void* out_) {
  const T* in = static_cast<const T*>(in_);
  T* out = static_cast<T*>(out_);
  constexpr int64_t L = kLanes<T>;
  if (r.inner == 1) {
    for (int64_t o = 0; o < r.outer; ++o) {
      const T* x = in + o * r.size;
      T* y = out + o * r.size;
      const int64_t n = r.size;
      const Vec<T> peak = splat(max_contiguous(x, n));
      Vec<T> acc = {};
      int64_t i = 0;
      for (; i + L <= n; i += L) {
        const Vec<T> e = vexp(load(x + i) - peak);
        store(y + i, e);
        acc += e;
      }
      double total = reduce_add(acc);
      if (i < n) {
        store_partial(y + i, vexp(load_partial(x + i, n - i) - peak), n - i);
        for (; i < n; ++i) {
          total += static_cast<double>(y[i]);
        }
      }
      const Vec<T> scale = splat(static_cast<T>(1.0 / total));
      for (i = 0; i + L <= n; i += L) {
        store(y + i, load(y + i) * scale);
      }
      if (i < n) {
        store_partial(y + i, load_partial(y + i, n - i) * scale, n - i);
      }
    }
    return;
  }
  for (int64_t o = 0; o < r.outer; ++o) {
    const T* x = in + o * r.size * r.inner;
    T* y = out + o * r.size * r.inner;
    for (int64_t j = 0; j < r.inner; j += L) {
      const int64_t lanes = scalar_min(L, r.inner - j);
      Vec<T> peak = load_partial(x + j, lanes);
      Mask<T> nan = peak != peak;
      for (int64_t s = 1; s < r.size; ++s) {
        const Vec<T> v = load_partial(x + s * r.inner + j, lanes);
        nan |= v != v;
        peak = maximum(peak, v);
      }
      peak = select<T>(nan, splat(static_cast<T>(__builtin_nan(""))), peak);
      Vec<T> acc = {};
      for (int64_t s = 0; s < r.size; ++s) {
        const Vec<T> e = vexp(load_partial(x + s * r.inner + j, lanes) - peak);
        store_partial(y + s * r.inner + j, e, lanes);
        acc += e;
      }
      const Vec<T> scale = splat(static_cast<T>(1)) / acc;
      for (int64_t s = 0; s < r.size; ++s) {
        T* row = y + s * r.inner + j;
        store_partial(row, load_partial(row, lanes) * scale, lanes);
      }
    }
  }
}

// ---- matmul (what the BLAS does not take) ------------------------------------

// c[R rows x 2 vectors] += a[R x kc] @ b[kc x 2 vectors], the tile held in
// registers across the whole kc loop.
template <typename T, int R>
void matmul_tile(int64_t kc, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc) {
  constexpr int64_t L = kLanes<T>;
  Vec<T> acc[R][2] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const Vec<T> b0 = load(b + p * ldb);
    const Vec<T> b1 = load(b + p * ldb + L);
    for (int r = 0; r < R; ++r) {
      const Vec<T> ar = splat(a[r * lda + p]);
      acc[r][0] += ar * b0;
      acc[r][1] += ar * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    store(c + r * ldc, load(c + r * ldc) + acc[r][0]);
    store(c + r * ldc + L, load(c + r * ldc + L) + acc[r][1]);
  }
}

// Blocked over k (a kc-deep panel of b stays in cache while every row of a
// passes) and tiled 4 rows x 2 vectors in registers; the columns past the
// last whole tile take a plain row loop.
template <typename T>
void matmul_2d(int64_t m, int64_t k, int64_t n, const T* a, const T* b, T* c) {
  constexpr int64_t kKc = 256;
  constexpr int64_t kNr = 2 * kLanes<T>;
  constexpr int64_t kMr = 4;
  for (int64_t i = 0; i < m * n; ++i) {
    c[i] = 0;
  }
  const int64_t n_tiled = n - n % kNr;
  for (int64_t p0 = 0; p0 < k; p0 += kKc) {
    const int64_t kc = scalar_min(kKc, k - p0);
    for (int64_t j0 = 0; j0 < n_tiled; j0 += kNr) {
      for (int64_t i0 = 0; i0 < m; i0 += kMr) {
        const T* at = a + i0 * k + p0;
        const T* bt = b + p0 * n + j0;
        T* ct = c + i0 * n + j0;
        switch (scalar_min(kMr, m - i0)) {
          case 4:
            matmul_tile<T, 4>(kc, at, k, bt, n, ct, n);
            break;
          case 3:
            matmul_tile<T, 3>(kc, at, k, bt, n, ct, n);
            break;
          case 2:
            matmul_tile<T, 2>(kc, at, k, bt, n, ct, n);
            break;
          default:
            matmul_tile<T, 1>(kc, at, k, bt, n, ct, n);
            break;
        }
      }
    }
    if (n_tiled < n) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = p0; p < p0 + kc; ++p) {
          const T av = a[i * k + p];
          for (int64_t j = n_tiled; j < n; ++j) {
            c[i * n + j] += av * b[p * n + j];
          }
        }
      }
    }
  }
}

template <typename T>
void matmul_kernel(const Matmul& g, const void* a_, const void* b_, void* out_) {
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  T* out = static_cast<T*>(out_);
  for (int64_t batch = 0; batch < g.batch; ++batch) {
    matmul_2d(g.m, g.k, g.n, a + batch * g.a_batch_stride, b + batch * g.b_batch_stride, out + batch * g.m * g.n);
  }
}

}  // namespace
}  // namespace at::native::CPU_CAPABILITY

#define TORCH_CPU_CAT_(a, b) a##b
#define TORCH_CPU_CAT(a, b) TORCH_CPU_CAT_(a, b)

namespace at::native::cpu {

namespace cap = ::at::native::CPU_CAPABILITY;

// The table, in KernelTable's field order: [kind][Float32, Float64, Int64].
extern const KernelTable TORCH_CPU_CAT(kernel_table_, CPU_CAPABILITY);
const KernelTable TORCH_CPU_CAT(kernel_table_, CPU_CAPABILITY) = {
    {
        {cap::binary_kernel<cap::AddOp, float>, cap::binary_kernel<cap::AddOp, double>,
         cap::binary_kernel<cap::AddOp, int64_t>},
        {cap::binary_kernel<cap::SubOp, float>, cap::binary_kernel<cap::SubOp, double>,
         cap::binary_kernel<cap::SubOp, int64_t>},
        {cap::binary_kernel<cap::MulOp, float>, cap::binary_kernel<cap::MulOp, double>,
         cap::binary_kernel<cap::MulOp, int64_t>},
        // Division always has a floating output (true division).
        {cap::binary_kernel<cap::DivOp, float>, cap::binary_kernel<cap::DivOp, double>, nullptr},
    },
    {
        {cap::unary_kernel<cap::NegOp, float>, cap::unary_kernel<cap::NegOp, double>,
         cap::unary_kernel<cap::NegOp, int64_t>},
        {cap::unary_kernel<cap::ReluOp, float>, cap::unary_kernel<cap::ReluOp, double>,
         cap::unary_kernel<cap::ReluOp, int64_t>},
        // exp and tanh of an integer tensor compute in float32.
        {cap::unary_kernel<cap::ExpOp, float>, cap::unary_kernel<cap::ExpOp, double>, nullptr},
        {cap::unary_kernel<cap::TanhOp, float>, cap::unary_kernel<cap::TanhOp, double>, nullptr},
    },
    {cap::sum_kernel<float>, cap::sum_kernel<double>, cap::sum_kernel<int64_t>},
    {cap::max_kernel<float>, cap::max_kernel<double>, cap::max_kernel<int64_t>},
    {cap::softmax_kernel<float>, cap::softmax_kernel<double>, nullptr},
    {cap::matmul_kernel<float>, cap::matmul_kernel<double>, cap::matmul_kernel<int64_t>},
};

}  // namespace at::native::cpu
