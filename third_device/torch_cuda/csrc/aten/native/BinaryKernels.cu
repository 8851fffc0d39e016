#include "torch_cuda/csrc/aten/native/BinaryKernels.h"

#include <stdexcept>

#include "aten/native/ElementwiseMath.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAStream.h"

namespace torch_cuda::native {
namespace {

namespace math = at::native::math;

template <typename Op>
__global__ void binary_kernel(const float* a, const float* b, float* out, int64_t n, Op op) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = op(a[i], b[i]);
  }
}

// Core's op math, wrapped as device functors.
struct AddOp {
  __device__ float operator()(float x, float y) const { return math::add(x, y); }
};
struct SubOp {
  __device__ float operator()(float x, float y) const { return math::sub(x, y); }
};
struct MulOp {
  __device__ float operator()(float x, float y) const { return math::mul(x, y); }
};
struct DivOp {
  __device__ float operator()(float x, float y) const { return math::div(x, y); }
};
struct MaxOp {
  __device__ float operator()(float x, float y) const { return math::maximum(x, y); }
};
struct MinOp {
  __device__ float operator()(float x, float y) const { return math::minimum(x, y); }
};

template <typename Op>
void launch(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  constexpr int kThreads = 256;
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  // A grid-stride loop covers the rest; 65535 blocks keeps every arch happy.
  const int blocks = static_cast<int>(wanted < 65535 ? wanted : 65535);
  binary_kernel<<<blocks, kThreads, 0, stream>>>(a, b, out, n, Op{});
  TORCH_CUDA_CHECK(cudaGetLastError());
}

struct DeviceBuffer {
  explicit DeviceBuffer(size_t count) { TORCH_CUDA_CHECK(cudaMalloc(&ptr, count * sizeof(float))); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* ptr = nullptr;
};

}  // namespace

void launch_binary(BinaryOp op, const float* a, const float* b, float* out, int64_t n,
                   cudaStream_t stream) {
  switch (op) {
    case BinaryOp::Add:
      return launch<AddOp>(a, b, out, n, stream);
    case BinaryOp::Sub:
      return launch<SubOp>(a, b, out, n, stream);
    case BinaryOp::Mul:
      return launch<MulOp>(a, b, out, n, stream);
    case BinaryOp::Div:
      return launch<DivOp>(a, b, out, n, stream);
    case BinaryOp::Maximum:
      return launch<MaxOp>(a, b, out, n, stream);
    case BinaryOp::Minimum:
      return launch<MinOp>(a, b, out, n, stream);
  }
  throw std::invalid_argument("launch_binary: unknown op");
}

std::vector<float> binary_on_device(BinaryOp op, const std::vector<float>& a,
                                    const std::vector<float>& b, int device) {
  if (a.size() != b.size()) {
    throw std::invalid_argument("binary_on_device: inputs have " + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + " elements");
  }
  CudaStream stream(static_cast<c10::DeviceIndex>(device));
  const size_t n = a.size();
  DeviceBuffer da(n), db(n), dout(n);
  const size_t bytes = n * sizeof(float);
  TORCH_CUDA_CHECK(cudaMemcpyAsync(da.ptr, a.data(), bytes, cudaMemcpyHostToDevice, stream.handle()));
  TORCH_CUDA_CHECK(cudaMemcpyAsync(db.ptr, b.data(), bytes, cudaMemcpyHostToDevice, stream.handle()));
  launch_binary(op, da.ptr, db.ptr, dout.ptr, static_cast<int64_t>(n), stream.handle());
  std::vector<float> out(n);
  TORCH_CUDA_CHECK(cudaMemcpyAsync(out.data(), dout.ptr, bytes, cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  return out;
}

}  // namespace torch_cuda::native
