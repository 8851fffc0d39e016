#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "aten/KernelCall.h"

namespace at {

// No kernel for an op on a device type (surfaces in Python as NotImplementedError).
class NotImplementedError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

using Kernel = std::function<void(const KernelCall&)>;

// Observes every dispatched op (the profiler's seam). Called around the kernel
// call with the op name and the call; must be cheap when nothing listens.
class DispatchObserver {
 public:
  virtual ~DispatchObserver() = default;
  virtual void on_enter(const std::string& op, const KernelCall& call) = 0;
  virtual void on_exit(const std::string& op, const KernelCall& call) = 0;
};

// The kernel table: (op name, device type) -> kernel. Core registers the CPU
// kernels; each backend registers its device's kernels when it loads.
class Dispatcher {
 public:
  static Dispatcher& instance();

  // Throws std::invalid_argument if (op, device type) already has a kernel,
  // naming who registered it and override_kernel, the way to replace one.
  void register_kernel(const std::string& op, c10::DeviceTypeId type, Kernel kernel);

  // Replaces the kernel of (op, device type): how a backend that registers
  // core's shared kernels (native::register_core_kernels) swaps one of them
  // for its own. Explicit rather than "last registration wins", so a copied
  // backend that registers a name twice by mistake still fails loudly. Only
  // the device type's owner may replace (the open RegistrationSite must be
  // the one that registered the type), and only an existing kernel: a typo
  // in the op name throws instead of adding an op nobody calls. A call
  // already running the old kernel finishes with it.
  void override_kernel(const std::string& op, c10::DeviceTypeId type, Kernel kernel);

  // Who registered or last replaced the kernel (a RegistrationSite owner);
  // throws std::out_of_range when there is none.
  std::string kernel_owner(const std::string& op, c10::DeviceTypeId type) const;
  bool has_kernel(const std::string& op, c10::DeviceTypeId type) const;
  std::vector<std::string> ops(c10::DeviceTypeId type) const;

  // Runs the kernel of out's device; NotImplementedError names op and device.
  void call(const std::string& op, const KernelCall& call) const;

  void set_observer(DispatchObserver* observer) { observer_.store(observer, std::memory_order_release); }
  DispatchObserver* observer() const { return observer_.load(std::memory_order_acquire); }

 private:
  Dispatcher() = default;

  struct Entry {
    std::unique_ptr<Kernel> kernel;
    std::string owner;  // the RegistrationSite open when it was registered or replaced
  };

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, c10::DeviceTypeId>, Entry> kernels_;
  // Replaced kernels stay alive: call() runs a kernel outside the lock.
  std::vector<std::unique_ptr<Kernel>> replaced_;
  std::atomic<DispatchObserver*> observer_{nullptr};
};

}  // namespace at
