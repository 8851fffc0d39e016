#pragma once

// Kernel bodies for every op core defines, written once. Each is a function
// template over `Resolve`, which maps a Tensor to a host-accessible pointer:
// the CPU passes data_ptr() through; an emulated device translates its
// device addresses inside its stream worker. A backend registers them under
// its device type, wrapped in whatever launches work on its stream.

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "aten/KernelCall.h"
#include "aten/native/ElementwiseMath.h"
#include "aten/native/Loops.h"

namespace at::native {

template <typename T>
T apply_unary(UnaryKind kind, T a) {
  switch (kind) {
    case UnaryKind::Neg:
      return static_cast<T>(-a);
    case UnaryKind::Relu:
      return math::relu(a);
    case UnaryKind::Exp:
      return static_cast<T>(std::exp(a));
    case UnaryKind::Tanh:
      return static_cast<T>(std::tanh(a));
  }
  return a;
}

// out = a (op) b, all of out's dtype, a and b broadcast over out. The op is
// chosen once, outside the element loop: a switch per element kept every loop
// scalar and made each op pay for the cases tested before its own (add ran
// 1.3-1.9x slower than mul, which the compiler's case order tested first).
template <BinaryKind K, typename T>
void binary_loop(const KernelCall& c, const T* a, const T* b, T* out) {
  for_each_broadcast2(c.out.shape(), c.input_strides[0], c.input_strides[1],
                      [&](int64_t i, int64_t oa, int64_t ob) { out[i] = apply_binary(K, a[oa], b[ob]); });
}

template <typename Resolve>
void binary_kernel(BinaryKind kind, const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = reinterpret_cast<const T*>(resolve(c.inputs[0]));
    const T* b = reinterpret_cast<const T*>(resolve(c.inputs[1]));
    T* out = reinterpret_cast<T*>(resolve(c.out));
    switch (kind) {
      case BinaryKind::Add:
        return binary_loop<BinaryKind::Add>(c, a, b, out);
      case BinaryKind::Sub:
        return binary_loop<BinaryKind::Sub>(c, a, b, out);
      case BinaryKind::Mul:
        return binary_loop<BinaryKind::Mul>(c, a, b, out);
      case BinaryKind::Div:
        return binary_loop<BinaryKind::Div>(c, a, b, out);
    }
  });
}

template <UnaryKind K, typename T>
void unary_loop(int64_t n, const T* a, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = apply_unary(K, a[i]);
  }
}

template <typename Resolve>
void unary_kernel(UnaryKind kind, const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = reinterpret_cast<const T*>(resolve(c.inputs[0]));
    T* out = reinterpret_cast<T*>(resolve(c.out));
    const int64_t n = c.out.numel();
    switch (kind) {
      case UnaryKind::Neg:
        return unary_loop<UnaryKind::Neg>(n, a, out);
      case UnaryKind::Relu:
        return unary_loop<UnaryKind::Relu>(n, a, out);
      case UnaryKind::Exp:
        return unary_loop<UnaryKind::Exp>(n, a, out);
      case UnaryKind::Tanh:
        return unary_loop<UnaryKind::Tanh>(n, a, out);
    }
  });
}

// out = cast(input) broadcast over out: copy_, .to(dtype), and dtype promotion.
template <typename Resolve>
void copy_kernel(const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto out_tag) {
    using O = decltype(out_tag);
    c10::dispatch_dtype(c.inputs[0].dtype(), [&](auto in_tag) {
      using I = decltype(in_tag);
      const I* in = reinterpret_cast<const I*>(resolve(c.inputs[0]));
      O* out = reinterpret_cast<O*>(resolve(c.out));
      for_each_broadcast1(c.out.shape(), c.input_strides[0],
                          [&](int64_t i, int64_t oi) { out[i] = static_cast<O>(in[oi]); });
    });
  });
}

template <typename Resolve>
void fill_kernel(const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = reinterpret_cast<T*>(resolve(c.out));
    std::fill(out, out + c.out.numel(), static_cast<T>(c.scalar));
  });
}

// Accumulates in double for floating types (and int64 for integers), so a
// float32 sum of millions of elements keeps its precision.
template <typename T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// out[o, i] = sum over s of in[o, s, i]; out has the input's dtype, or int64 for bool.
template <typename Resolve>
void sum_kernel(const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.inputs[0].dtype(), [&](auto in_tag) {
    using I = decltype(in_tag);
    c10::dispatch_dtype(c.out.dtype(), [&](auto out_tag) {
      using O = decltype(out_tag);
      const I* in = reinterpret_cast<const I*>(resolve(c.inputs[0]));
      O* out = reinterpret_cast<O*>(resolve(c.out));
      for (int64_t o = 0; o < c.outer; ++o) {
        for (int64_t i = 0; i < c.inner; ++i) {
          Accumulator<O> acc = 0;
          const I* p = in + o * c.size * c.inner + i;
          for (int64_t s = 0; s < c.size; ++s) {
            acc += static_cast<Accumulator<O>>(p[s * c.inner]);
          }
          out[o * c.inner + i] = static_cast<O>(acc);
        }
      }
    });
  });
}

template <typename Resolve>
void max_kernel(const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = reinterpret_cast<const T*>(resolve(c.inputs[0]));
    T* out = reinterpret_cast<T*>(resolve(c.out));
    for (int64_t o = 0; o < c.outer; ++o) {
      for (int64_t i = 0; i < c.inner; ++i) {
        const T* p = in + o * c.size * c.inner + i;
        T best = p[0];
        for (int64_t s = 1; s < c.size; ++s) {
          const T v = p[s * c.inner];
          // NaN propagates, as in PyTorch and NumPy.
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(v) || std::isnan(best)) {
              best = std::numeric_limits<T>::quiet_NaN();
              continue;
            }
          }
          best = math::maximum(best, v);
        }
        out[o * c.inner + i] = best;
      }
    }
  });
}

// Max-subtracted softmax along `size`, in double, so exp never overflows.
template <typename Resolve>
void softmax_kernel(const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = reinterpret_cast<const T*>(resolve(c.inputs[0]));
      T* out = reinterpret_cast<T*>(resolve(c.out));
      for (int64_t o = 0; o < c.outer; ++o) {
        for (int64_t i = 0; i < c.inner; ++i) {
          const int64_t base = o * c.size * c.inner + i;
          double peak = -std::numeric_limits<double>::infinity();
          for (int64_t s = 0; s < c.size; ++s) {
            peak = std::max(peak, static_cast<double>(in[base + s * c.inner]));
          }
          double total = 0;
          for (int64_t s = 0; s < c.size; ++s) {
            total += std::exp(static_cast<double>(in[base + s * c.inner]) - peak);
          }
          for (int64_t s = 0; s < c.size; ++s) {
            out[base + s * c.inner] =
                static_cast<T>(std::exp(static_cast<double>(in[base + s * c.inner]) - peak) / total);
          }
        }
      }
    } else {
      throw std::invalid_argument("softmax needs a floating dtype");
    }
  });
}

// i-k-j loop order: the innermost loop walks rows of b and out contiguously.
template <typename Resolve>
void matmul_kernel(const KernelCall& c, Resolve&& resolve) {
  c10::dispatch_dtype(c.out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* a = reinterpret_cast<const T*>(resolve(c.inputs[0]));
    const T* b = reinterpret_cast<const T*>(resolve(c.inputs[1]));
    T* out = reinterpret_cast<T*>(resolve(c.out));
    std::vector<Accumulator<T>> row(static_cast<size_t>(c.n));
    for (int64_t batch = 0; batch < c.batch; ++batch) {
      const T* ab = a + batch * c.a_batch_stride;
      const T* bb = b + batch * c.b_batch_stride;
      T* ob = out + batch * c.m * c.n;
      for (int64_t i = 0; i < c.m; ++i) {
        std::fill(row.begin(), row.end(), Accumulator<T>(0));
        for (int64_t p = 0; p < c.k; ++p) {
          const Accumulator<T> av = ab[i * c.k + p];
          const T* brow = bb + p * c.n;
          for (int64_t j = 0; j < c.n; ++j) {
            row[j] += av * static_cast<Accumulator<T>>(brow[j]);
          }
        }
        for (int64_t j = 0; j < c.n; ++j) {
          ob[i * c.n + j] = static_cast<T>(row[j]);
        }
      }
    }
  });
}

// Registers every kernel above for a device type, each wrapped by `launch`,
// which receives the call and a closure running the kernel body with the
// device's resolver (CPU: run it now; an accelerator: queue it on its stream).
template <typename Register, typename Launch>
void register_core_kernels(Register&& reg, Launch&& launch) {
  const std::pair<const char*, BinaryKind> binaries[] = {
      {"add", BinaryKind::Add}, {"sub", BinaryKind::Sub}, {"mul", BinaryKind::Mul}, {"div", BinaryKind::Div}};
  for (const auto& [name, kind] : binaries) {
    const BinaryKind k = kind;
    reg(name, [launch, k](const KernelCall& c) {
      launch(c, [k](const KernelCall& call, auto&& resolve) { binary_kernel(k, call, resolve); });
    });
  }
  const std::pair<const char*, UnaryKind> unaries[] = {
      {"neg", UnaryKind::Neg}, {"relu", UnaryKind::Relu}, {"exp", UnaryKind::Exp}, {"tanh", UnaryKind::Tanh}};
  for (const auto& [name, kind] : unaries) {
    const UnaryKind k = kind;
    reg(name, [launch, k](const KernelCall& c) {
      launch(c, [k](const KernelCall& call, auto&& resolve) { unary_kernel(k, call, resolve); });
    });
  }
  reg("copy", [launch](const KernelCall& c) {
    launch(c, [](const KernelCall& call, auto&& resolve) { copy_kernel(call, resolve); });
  });
  reg("fill", [launch](const KernelCall& c) {
    launch(c, [](const KernelCall& call, auto&& resolve) { fill_kernel(call, resolve); });
  });
  reg("sum", [launch](const KernelCall& c) {
    launch(c, [](const KernelCall& call, auto&& resolve) { sum_kernel(call, resolve); });
  });
  reg("max", [launch](const KernelCall& c) {
    launch(c, [](const KernelCall& call, auto&& resolve) { max_kernel(call, resolve); });
  });
  reg("softmax", [launch](const KernelCall& c) {
    launch(c, [](const KernelCall& call, auto&& resolve) { softmax_kernel(call, resolve); });
  });
  reg("matmul", [launch](const KernelCall& c) {
    launch(c, [](const KernelCall& call, auto&& resolve) { matmul_kernel(call, resolve); });
  });
}

}  // namespace at::native
