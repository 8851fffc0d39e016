#pragma once

#include <functional>
#include <map>
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

  // Throws std::invalid_argument if (op, device type) already has a kernel.
  void register_kernel(const std::string& op, c10::DeviceTypeId type, Kernel kernel);
  bool has_kernel(const std::string& op, c10::DeviceTypeId type) const;
  std::vector<std::string> ops(c10::DeviceTypeId type) const;

  // Runs the kernel of out's device; NotImplementedError names op and device.
  void call(const std::string& op, const KernelCall& call) const;

  void set_observer(DispatchObserver* observer) { observer_ = observer; }
  DispatchObserver* observer() const { return observer_; }

 private:
  Dispatcher() = default;

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, c10::DeviceTypeId>, Kernel> kernels_;
  DispatchObserver* observer_ = nullptr;
};

}  // namespace at
