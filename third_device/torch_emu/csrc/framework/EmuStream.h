#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace torch_emu {

// One emulated stream: a worker thread running queued work in order,
// asynchronously to the host, as a GPU stream runs kernels. An exception in
// queued work is kept (like an asynchronous device error) and raised by the
// next synchronize; later work still runs.
class EmuStream {
 public:
  EmuStream();
  ~EmuStream();
  EmuStream(const EmuStream&) = delete;
  EmuStream& operator=(const EmuStream&) = delete;

  void enqueue(std::function<void()> work);
  // True when nothing is queued or running.
  bool idle() const;
  // Tasks queued and not yet started: lets tests count the kernels a call
  // queued behind a blocked stream, without timing.
  size_t queued() const;
  // Waits until idle; throws std::runtime_error with the first error since
  // the last synchronize, if any.
  void synchronize();
  // Waits until idle without taking the stream's pending error (the next
  // synchronize still reports it).
  void wait_idle();

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable drained_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false;
  bool stop_ = false;
  std::string error_;
  std::thread worker_;
};

}  // namespace torch_emu
