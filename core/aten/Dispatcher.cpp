#include "aten/Dispatcher.h"

#include "c10/core/DeviceRegistry.h"
#include "c10/core/RegistrationSite.h"

namespace at {

Dispatcher& Dispatcher::instance() {
  static auto* dispatcher = new Dispatcher();
  return *dispatcher;
}

void Dispatcher::register_kernel(const std::string& op, c10::DeviceTypeId type, Kernel kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto [it, inserted] = kernels_.try_emplace(std::make_pair(op, type));
  if (!inserted) {
    throw std::invalid_argument(
        "op '" + op + "' already has a kernel for device type '" + c10::DeviceRegistry::instance().name(type) +
        "' (registered by " + it->second.owner + "); to replace it, call at::Dispatcher::instance()"
        ".override_kernel(\"" + op + "\", type, kernel) after the first registration "
        "(docs/adding-a-backend.md, \"Replacing one of core's kernels\")");
  }
  it->second = Entry{std::make_unique<Kernel>(std::move(kernel)), c10::RegistrationSite::current()};
}

void Dispatcher::override_kernel(const std::string& op, c10::DeviceTypeId type, Kernel kernel) {
  const std::string& type_owner = c10::DeviceRegistry::instance().owner(type);
  const std::string who = c10::RegistrationSite::current();
  const std::string& type_name = c10::DeviceRegistry::instance().name(type);
  if (who != type_owner) {
    throw std::invalid_argument(who + " cannot override op '" + op + "' for device type '" + type_name +
                                "': the device type is registered by " + type_owner +
                                ", and only its owner may replace its kernels");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = kernels_.find({op, type});
  if (it == kernels_.end()) {
    throw std::invalid_argument("cannot override op '" + op + "' for device type '" + type_name +
                                "': it has no kernel to replace; use register_kernel for a new op");
  }
  replaced_.push_back(std::move(it->second.kernel));
  it->second = Entry{std::make_unique<Kernel>(std::move(kernel)), who};
}

std::string Dispatcher::kernel_owner(const std::string& op, c10::DeviceTypeId type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = kernels_.find({op, type});
  if (it == kernels_.end()) {
    throw std::out_of_range("op '" + op + "' has no kernel for device type '" +
                            c10::DeviceRegistry::instance().name(type) + "'");
  }
  return it->second.owner;
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
      kernel = it->second.kernel.get();  // never freed: a replaced one moves to replaced_
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
