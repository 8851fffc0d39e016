#include "torch_cuda/csrc/jit/FusedKernels.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "aten/Dispatcher.h"
#include "aten/KernelCall.h"
#include "torch_cuda/csrc/framework/CUDAError.h"
#include "torch_cuda/csrc/framework/CUDAHooks.h"
#include "torch_cuda/csrc/jit/DriverApi.h"

namespace torch_cuda::jit {
namespace {

// Makes `device` current for the scope (its primary context with it: the
// runtime's cudaSetDevice initialises and binds it), restoring the previous.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    TORCH_CUDA_CHECK(cudaGetDevice(&previous_));
    TORCH_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

// One compiled graph: its images, and the function loaded per device.
class NvrtcKernel {
 public:
  NvrtcKernel(std::string name, std::map<int, std::string> images, bool reduction, int num_inputs)
      : name_(std::move(name)), images_(std::move(images)), reduction_(reduction), num_inputs_(num_inputs) {}

  void launch(const at::KernelCall& call) {
    if (static_cast<int>(call.inputs.size()) != num_inputs_) {
      throw std::invalid_argument(name_ + ": expects " + std::to_string(num_inputs_) + " inputs, got " +
                                  std::to_string(call.inputs.size()));
    }
    const long long n = call.size;
    if (n == 0 && !reduction_) {
      return;  // nothing to write (a sum of nothing still writes its 0)
    }
    const int device = call.stream.device.index();
    DeviceScope scope(device);
    const DriverApi& driver = DriverApi::get();
    CUfunction fn = function(device, driver);
    std::vector<CUdeviceptr> pointers;
    pointers.reserve(call.inputs.size() + 1);
    for (const at::Tensor& t : call.inputs) {
      pointers.push_back(reinterpret_cast<CUdeviceptr>(t.data_ptr()));
    }
    pointers.push_back(reinterpret_cast<CUdeviceptr>(call.out.data_ptr()));
    std::vector<void*> params;
    params.reserve(pointers.size() + 1);
    for (CUdeviceptr& p : pointers) {
      params.push_back(&p);
    }
    long long count = n;
    params.push_back(&count);
    unsigned int grid = 1;
    unsigned int block = kReductionBlock;
    if (!reduction_) {
      block = kElementwiseBlock;
      const long long blocks = (n + kElementwiseBlock - 1) / kElementwiseBlock;
      // Enough blocks to fill the device; the kernel's grid-stride loop does the rest.
      grid = static_cast<unsigned int>(std::min<long long>(blocks, multiprocessors(device) * 32LL));
    }
    const cudaStream_t stream = cuda_hooks().native_stream(call.stream);
    driver.check(driver.launch_kernel(fn, grid, 1, 1, block, 1, 1, 0, reinterpret_cast<CUstream>(stream),
                                      params.data(), nullptr),
                 ("cuLaunchKernel(" + name_ + ")").c_str());
  }

 private:
  CUfunction function(int device, const DriverApi& driver) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto loaded = functions_.find(device);
    if (loaded != functions_.end()) {
      return loaded->second;
    }
    const int arch = device_arch(device);
    const auto image = images_.find(arch);
    if (image == images_.end()) {
      throw std::runtime_error(name_ + " was not compiled for cuda:" + std::to_string(device) + "'s architecture sm_" +
                               std::to_string(arch));
    }
    // The module stays loaded (in the device's primary context) for the life
    // of the process, like the kernel's dispatcher registration.
    CUmodule module = nullptr;
    driver.check(driver.module_load_data(&module, image->second.data()), "cuModuleLoadData");
    CUfunction fn = nullptr;
    driver.check(driver.module_get_function(&fn, module, name_.c_str()), "cuModuleGetFunction");
    functions_.emplace(device, fn);
    return fn;
  }

  static int multiprocessors(int device) {
    int count = 0;
    TORCH_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return std::max(count, 1);
  }

  const std::string name_;
  const std::map<int, std::string> images_;
  const bool reduction_;
  const int num_inputs_;
  std::mutex mutex_;
  std::map<int, CUfunction> functions_;
};

}  // namespace

int device_arch(int device) {
  int major = 0;
  int minor = 0;
  TORCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TORCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

void register_nvrtc_kernel(c10::DeviceTypeId cuda, const std::string& name, std::map<int, std::string> images,
                           bool reduction, int num_inputs) {
  if (images.empty()) {
    throw std::invalid_argument("register_nvrtc_kernel(" + name + "): no module image");
  }
  at::Dispatcher& dispatcher = at::Dispatcher::instance();
  if (dispatcher.has_kernel(name, cuda)) {
    return;  // the name is the graph's hash: the same kernel
  }
  auto kernel = std::make_shared<NvrtcKernel>(name, std::move(images), reduction, num_inputs);
  try {
    dispatcher.register_kernel(name, cuda, [kernel](const at::KernelCall& call) { kernel->launch(call); });
  } catch (const std::invalid_argument&) {
    // Another thread registered the same graph in between: fine.
  }
}

}  // namespace torch_cuda::jit
