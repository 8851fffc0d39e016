#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "aten/Tensor.h"
#include "c10/core/Stream.h"

namespace torch_emu {

// One collective of the eccl backend, placed on an emu stream the way a
// collective library places its kernel: in stream order, after the work
// already queued there, and before the work queued later.
//
// launch() queues one "kernel" on the stream. It copies the tensors' bytes
// into a host staging buffer, signals the host, blocks the stream until the
// host has exchanged the data with the other ranks (as a collective kernel
// spins until its peers' data arrives), then copies the results back into
// the tensors marked writable. Work queued on the stream afterwards sees the
// results; the host never dereferences a device address.
class EmuCollective {
 public:
  // All tensors on one emu device; `writes[i]` marks tensors receiving results.
  static std::shared_ptr<EmuCollective> launch(const std::vector<at::Tensor>& tensors,
                                               const std::vector<bool>& writes, const c10::Stream& stream);

  // Host side: waits until the staging buffer holds the tensors' contents
  // (false on timeout, e.g. when earlier work on the stream never finishes).
  bool wait_staged(double timeout_seconds);
  // The staged bytes of tensor i (host memory, valid while this object lives).
  char* host_data(size_t i) { return buffer_.get() + offsets_[i]; }
  size_t nbytes(size_t i) const { return tensors_[i].nbytes(); }
  const at::Tensor& tensor(size_t i) const { return tensors_[i]; }
  size_t size() const { return tensors_.size(); }
  // Lets the stream go on: with `write_back`, the writable tensors receive the
  // buffer's bytes; without, they are left untouched (the collective failed).
  void release(bool write_back);
  // Waits until the results are in the tensors (false on timeout).
  bool wait_finished(double timeout_seconds);

 private:
  enum class State { Queued, Staged, Finished };
  EmuCollective(const std::vector<at::Tensor>& tensors, const std::vector<bool>& writes);
  void run_on_stream();
  bool wait_for(State state, double timeout_seconds);

  std::vector<at::Tensor> tensors_;  // keeps the storage alive until the stream is done
  std::vector<bool> writes_;
  std::vector<size_t> offsets_;
  std::unique_ptr<char[]> buffer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_ = State::Queued;
  bool released_ = false;
  bool write_back_ = false;
};

}  // namespace torch_emu
