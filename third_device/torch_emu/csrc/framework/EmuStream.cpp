#include "torch_emu/csrc/framework/EmuStream.h"

#include <exception>
#include <stdexcept>
#include <utility>

namespace torch_emu {

EmuStream::EmuStream() : worker_([this] { run(); }) {}

EmuStream::~EmuStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  worker_.join();
}

void EmuStream::enqueue(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(work));
  }
  work_ready_.notify_one();
}

bool EmuStream::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty() && !running_;
}

size_t EmuStream::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

void EmuStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [this] { return queue_.empty() && !running_; });
  if (!error_.empty()) {
    std::string error = std::move(error_);
    error_.clear();
    throw std::runtime_error("emu: a kernel failed on this stream: " + error);
  }
}

void EmuStream::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [this] { return queue_.empty() && !running_; });
}

void EmuStream::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) {
      return;  // stop requested and everything done
    }
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    std::string failure;
    try {
      work();
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown error";
    }
    work = nullptr;  // release captured tensors before reporting idle
    lock.lock();
    running_ = false;
    if (!failure.empty() && error_.empty()) {
      error_ = failure;
    }
    if (queue_.empty()) {
      drained_.notify_all();
    }
  }
}

}  // namespace torch_emu
