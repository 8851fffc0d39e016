#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "aten/Dispatcher.h"
#include "csrc/profiler/ProfilerStubs.h"

namespace torch_core::profiler {

// One recorded interval: a dispatched op or a user range (record_function).
struct ProfiledEvent {
  std::string name;
  std::string kind;  // "op" or "user"
  std::vector<std::vector<int64_t>> input_shapes;
  std::string device;  // the op's output device; empty for user ranges
  int64_t stream = 0;
  uint64_t thread = 0;
  int64_t host_start_ns = 0;
  int64_t host_end_ns = 0;
  // Device-side interval of the op's kernel, measured on its stream; -1 when
  // the device has no profiler stubs or device activity was not requested.
  int64_t device_start_ns = -1;
  int64_t device_end_ns = -1;
  int64_t correlation = 0;  // links the host op to its kernel in traces
  std::shared_ptr<DeviceMark> device_start_mark;
  std::shared_ptr<DeviceMark> device_end_mark;
};

// Records every op the dispatcher runs while active, plus user ranges.
// Inactive, the dispatcher's only cost is one null check of its observer.
class Profiler final : public at::DispatchObserver {
 public:
  static Profiler& instance();

  // Throws std::logic_error if a profile is already running.
  void start(bool record_device);
  // Stops, waits for device marks, and returns events ordered by host start.
  std::vector<ProfiledEvent> stop();
  bool active() const { return active_.load(std::memory_order_relaxed); }

  void push_user_range(const std::string& name);
  void pop_user_range();

  void on_enter(const std::string& op, const at::KernelCall& call) override;
  void on_exit(const std::string& op, const at::KernelCall& call) override;

 private:
  Profiler() = default;
  void finish_open_event();

  std::atomic<bool> active_{false};
  bool record_device_ = false;
  std::mutex mutex_;
  std::vector<ProfiledEvent> done_;
  std::atomic<int64_t> next_correlation_{1};
};

int64_t host_now_ns();

}  // namespace torch_core::profiler
