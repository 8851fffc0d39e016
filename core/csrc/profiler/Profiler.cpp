#include "csrc/profiler/Profiler.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <thread>

namespace torch_core::profiler {
namespace {

// Events opened on this thread and not yet closed (ops nest inside user ranges).
std::vector<ProfiledEvent>& open_events() {
  thread_local std::vector<ProfiledEvent> stack;
  return stack;
}

uint64_t thread_number() { return std::hash<std::thread::id>()(std::this_thread::get_id()) & 0xffffff; }

}  // namespace

int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Profiler& Profiler::instance() {
  static auto* profiler = new Profiler();
  return *profiler;
}

void Profiler::start(bool record_device) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (active_) {
    throw std::logic_error("a profile is already running; profiles do not nest");
  }
  done_.clear();
  record_device_ = record_device;
  active_ = true;
  at::Dispatcher::instance().set_observer(this);
}

std::vector<ProfiledEvent> Profiler::stop() {
  std::vector<ProfiledEvent> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    at::Dispatcher::instance().set_observer(nullptr);
    active_ = false;
    events.swap(done_);
  }
  // Device marks resolve once their streams get there (waits for the kernels).
  for (ProfiledEvent& e : events) {
    if (e.device_start_mark && e.device_end_mark) {
      e.device_start_ns = e.device_start_mark->time_ns();
      e.device_end_ns = e.device_end_mark->time_ns();
    }
    e.device_start_mark.reset();
    e.device_end_mark.reset();
  }
  std::sort(events.begin(), events.end(),
            [](const ProfiledEvent& a, const ProfiledEvent& b) { return a.host_start_ns < b.host_start_ns; });
  return events;
}

void Profiler::on_enter(const std::string& op, const at::KernelCall& call) {
  ProfiledEvent e;
  e.name = op;
  e.kind = "op";
  for (const at::Tensor& t : call.inputs) {
    e.input_shapes.push_back(t.shape());
  }
  e.device = call.out.device().str();
  e.stream = call.stream.id;
  e.thread = thread_number();
  e.correlation = next_correlation_++;
  if (record_device_ && !call.out.device().is_cpu()) {
    if (ProfilerStubs* stubs = profiler_stubs(call.out.device().type())) {
      e.device_start_mark = stubs->mark(call.stream);
    }
  }
  e.host_start_ns = host_now_ns();
  open_events().push_back(std::move(e));
}

void Profiler::on_exit(const std::string&, const at::KernelCall& call) {
  if (open_events().empty()) {
    return;  // profiling started while this op was already running
  }
  ProfiledEvent& e = open_events().back();
  if (e.device_start_mark) {
    e.device_end_mark = profiler_stubs(call.out.device().type())->end_mark(call.stream, *e.device_start_mark);
  }
  finish_open_event();
}

void Profiler::push_user_range(const std::string& name) {
  for_each_profiler_stubs([&name](ProfilerStubs& s) { s.range_push(name); });
  if (!active()) {
    return;
  }
  ProfiledEvent e;
  e.name = name;
  e.kind = "user";
  e.thread = thread_number();
  e.host_start_ns = host_now_ns();
  open_events().push_back(std::move(e));
}

void Profiler::pop_user_range() {
  for_each_profiler_stubs([](ProfilerStubs& s) { s.range_pop(); });
  if (!open_events().empty() && open_events().back().kind == "user") {
    finish_open_event();
  }
}

void Profiler::finish_open_event() {
  ProfiledEvent e = std::move(open_events().back());
  open_events().pop_back();
  e.host_end_ns = host_now_ns();
  std::lock_guard<std::mutex> lock(mutex_);
  if (active_) {
    done_.push_back(std::move(e));
  }
}

}  // namespace torch_core::profiler
