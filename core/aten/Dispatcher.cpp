#include "aten/Dispatcher.h"

#include "c10/core/DeviceRegistry.h"

namespace at {

Dispatcher& Dispatcher::instance() {
  static auto* dispatcher = new Dispatcher();
  return *dispatcher;
}

void Dispatcher::register_kernel(const std::string& op, c10::DeviceTypeId type, Kernel kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto [it, inserted] = kernels_.emplace(std::make_pair(op, type), std::move(kernel));
  if (!inserted) {
    throw std::invalid_argument("op '" + op + "' already has a kernel for device type '" +
                                c10::DeviceRegistry::instance().name(type) + "'");
  }
}

bool Dispatcher::has_kernel(const std::string& op, c10::DeviceTypeId type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kernels_.count({op, type}) != 0;
}

std::vector<std::string> Dispatcher::ops(c10::DeviceTypeId type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [key, kernel] : kernels_) {
    if (key.second == type) {
      out.push_back(key.first);
    }
  }
  return out;
}

void Dispatcher::call(const std::string& op, const KernelCall& call) const {
  const c10::Device& device = call.out.device();
  const Kernel* kernel = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = kernels_.find({op, device.type()});
    if (it != kernels_.end()) {
      kernel = &it->second;  // map nodes are stable; kernels are never removed
    }
  }
  if (kernel == nullptr) {
    throw NotImplementedError("op '" + op + "' has no kernel for device '" + device.str() +
                              "' (device type '" + device.type_name() + "')");
  }
  // Stream-aware frees: an operand allocated on another stream than the one
  // the kernel is queued on must not be reused before the kernel has run.
  for (const Tensor& input : call.inputs) {
    if (input.defined() && input.device().type() == device.type()) {
      input.record_stream(call.stream);
    }
  }
  call.out.record_stream(call.stream);
  DispatchObserver* observer = this->observer();
  if (observer != nullptr) {
    observer->on_enter(op, call);
  }
  (*kernel)(call);
  if (observer != nullptr) {
    observer->on_exit(op, call);
  }
}

}  // namespace at
