#include "torch_cuda/csrc/aten/CUDAKernels.h"

#include <utility>

#include "aten/Dispatcher.h"
#include "aten/native/Kernels.h"
#include "torch_cuda/csrc/aten/native/Launchers.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"
#include "torch_cuda/csrc/framework/DeviceScope.h"

namespace torch_cuda {
namespace {

using Launcher = void (*)(const at::KernelCall&, cudaStream_t);

// Makes the call's device current (launches go to the current device) and
// resolves its core stream id to the cudaStream_t the kernel is queued on.
template <typename F>
at::Kernel on_call_stream(F launch) {
  return [launch](const at::KernelCall& call) {
    const DeviceScope scope(call.out.device().index());
    launch(call, cuda_hooks().native_stream(call.stream));
  };
}

}  // namespace

void register_cuda_kernels(c10::DeviceTypeId cuda) {
  auto& dispatcher = at::Dispatcher::instance();
  using at::native::BinaryKind;
  using at::native::UnaryKind;
  const std::pair<const char*, BinaryKind> binaries[] = {
      {"add", BinaryKind::Add}, {"sub", BinaryKind::Sub}, {"mul", BinaryKind::Mul}, {"div", BinaryKind::Div}};
  for (const auto& [name, kind] : binaries) {
    const BinaryKind k = kind;
    dispatcher.register_kernel(name, cuda, on_call_stream([k](const at::KernelCall& c, cudaStream_t s) {
                                 native::binary(k, c, s);
                               }));
  }
  const std::pair<const char*, UnaryKind> unaries[] = {
      {"neg", UnaryKind::Neg}, {"relu", UnaryKind::Relu}, {"exp", UnaryKind::Exp}, {"tanh", UnaryKind::Tanh}};
  for (const auto& [name, kind] : unaries) {
    const UnaryKind k = kind;
    dispatcher.register_kernel(name, cuda, on_call_stream([k](const at::KernelCall& c, cudaStream_t s) {
                                 native::unary(k, c, s);
                               }));
  }
  const std::pair<const char*, Launcher> others[] = {
      {"copy", &native::copy}, {"fill", &native::fill},       {"sum", &native::sum},
      {"max", &native::max},   {"softmax", &native::softmax}, {"matmul", &native::matmul},
  };
  for (const auto& [name, launcher] : others) {
    dispatcher.register_kernel(name, cuda, on_call_stream(launcher));
  }
}

}  // namespace torch_cuda
