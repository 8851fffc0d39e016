#include "torch_emu/csrc/distributed/EmuCollective.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "torch_emu/csrc/framework/EmuDriver.h"

namespace torch_emu {

EmuCollective::EmuCollective(const std::vector<at::Tensor>& tensors, const std::vector<bool>& writes)
    : tensors_(tensors), writes_(writes) {
  if (tensors.size() != writes.size()) {
    throw std::invalid_argument("EmuCollective: one write flag per tensor is needed");
  }
  size_t total = 0;
  for (const at::Tensor& t : tensors_) {
    offsets_.push_back(total);
    total += (t.nbytes() + 63) / 64 * 64;  // each tensor's staging aligned for vector loads
  }
  buffer_.reset(new char[total == 0 ? 1 : total]);
}

std::shared_ptr<EmuCollective> EmuCollective::launch(const std::vector<at::Tensor>& tensors,
                                                     const std::vector<bool>& writes, const c10::Stream& stream) {
  for (const at::Tensor& t : tensors) {
    if (!(t.device() == stream.device)) {
      throw std::invalid_argument("eccl: tensor on " + t.device().str() + " but the collective runs on " +
                                  stream.device.str());
    }
  }
  std::shared_ptr<EmuCollective> c(new EmuCollective(tensors, writes));
  EmuDriver::instance().stream(stream.device.index(), stream.id).enqueue([c] { c->run_on_stream(); });
  return c;
}

void EmuCollective::run_on_stream() {
  EmuDriver& driver = EmuDriver::instance();
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].nbytes() != 0) {
      std::memcpy(host_data(i), driver.translate(tensors_[i].data_ptr()), tensors_[i].nbytes());
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  state_ = State::Staged;
  changed_.notify_all();
  // The host always releases: after the exchange, or on any failure (possibly
  // before the stream got here).
  changed_.wait(lock, [this] { return released_; });
  if (write_back_) {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (writes_[i] && tensors_[i].nbytes() != 0) {
        std::memcpy(driver.translate(tensors_[i].data_ptr()), host_data(i), tensors_[i].nbytes());
      }
    }
  }
  state_ = State::Finished;
  changed_.notify_all();
}

bool EmuCollective::wait_for(State state, double timeout_seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                           [this, state] { return static_cast<int>(state_) >= static_cast<int>(state); });
}

bool EmuCollective::wait_staged(double timeout_seconds) { return wait_for(State::Staged, timeout_seconds); }

bool EmuCollective::wait_finished(double timeout_seconds) { return wait_for(State::Finished, timeout_seconds); }

void EmuCollective::release(bool write_back) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (released_) {
    return;
  }
  released_ = true;
  write_back_ = write_back;
  changed_.notify_all();
}

}  // namespace torch_emu
