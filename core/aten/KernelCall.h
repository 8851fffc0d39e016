#pragma once

#include <cstdint>
#include <vector>

#include "aten/Tensor.h"
#include "c10/core/Stream.h"

namespace at {

// One op invocation, prepared device-agnostically by core's front end
// (aten/Functions.cpp): shapes broadcast, dtypes promoted, output allocated.
// A device's kernel only computes.
struct KernelCall {
  std::vector<Tensor> inputs;
  Tensor out;
  // Element strides of each input over out's shape (0 where broadcast).
  std::vector<Shape> input_strides;
  // Reductions and softmax see the input as [outer, size, inner].
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
  // matmul: out[b] (m x n) = a[b] (m x k) @ b[b] (k x n); batch strides in
  // elements, 0 when that operand is shared by every batch.
  int64_t batch = 1;
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  int64_t a_batch_stride = 0;
  int64_t b_batch_stride = 0;
  double scalar = 0;  // fill's value
  // The current stream of out's device: where the kernel must run.
  c10::Stream stream{c10::Device(c10::kCpuDeviceType), 0};
};

// The call with every tensor borrowed (Tensor::borrowed): what an
// asynchronous launcher keeps in its queued kernel.
inline KernelCall borrowed(const KernelCall& call) {
  KernelCall queued = call;
  for (Tensor& t : queued.inputs) {
    t = t.borrowed();
  }
  queued.out = call.out.borrowed();
  return queued;
}

}  // namespace at
