#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "c10/core/Device.h"
#include "c10/core/EventPool.h"
#include "c10/core/Stream.h"

namespace c10 {

// The device ran out of memory even after the allocator returned its cache.
class OutOfMemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MemoryStats {
  int64_t allocated = 0;      // bytes in blocks handed out (rounded sizes)
  int64_t reserved = 0;       // bytes obtained from the device (segments)
  int64_t max_allocated = 0;  // peak of `allocated` since the last reset
  int64_t max_reserved = 0;
  int64_t num_allocs = 0;
  int64_t num_frees = 0;
  int64_t num_raw_allocs = 0;  // calls to the backend's raw_allocate that succeeded
  int64_t num_raw_frees = 0;
  int64_t num_splits = 0;
  int64_t num_merges = 0;
  int64_t num_ooms = 0;
  int64_t cached_blocks = 0;  // free blocks kept for reuse
  int64_t pending_frees = 0;  // freed blocks waiting for other streams' work
};

// The framework's generic device allocator: a vendor supplies raw allocate and
// free (DeviceHooks); this caches memory on top, as PyTorch does for its
// accelerators, so any backend gets it for free.
//
// - Sizes round up to 512 bytes. Requests up to 1 MiB come from 2 MiB
//   segments (the small pool), larger ones from segments rounded up to 2 MiB
//   (the large pool), so small blocks do not fragment large ones.
// - A free block is reused only by requests on the stream it was allocated on
//   (per-stream pools): work queued on that stream may still be using it.
// - Frees are stream-aware (PyTorch's record_stream): a block also used by
//   other streams (record_stream) returns to its pool only once events
//   recorded on each of them at free time have completed. The events are
//   sync-only, taken from a per-device pool and returned to it, and queried
//   lazily, on the next allocation, so free never blocks the host.
// - Blocks are split when the remainder is worth keeping and merged with free
//   neighbours of the same segment when freed.
// - On exhaustion it returns wholly free segments to the device and retries;
//   if frees are still pending it then waits for their events (the work of
//   the other streams), returns their blocks and retries again before
//   throwing OutOfMemoryError. empty_cache waits for pending frees first too.
// - A backend call that fails (a query, a record) leaves every block in
//   exactly one place: in a pool, in use, pending with live events, or, when
//   no event could be recorded at free, kept out of every pool for good with
//   a warning (a leak, never a reuse under a running kernel).
class CachingAllocator {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallRequest = size_t{1} << 20;
  static constexpr size_t kSegment = size_t{2} << 20;

  // One allocator per device type, created on first use.
  static CachingAllocator& for_device_type(DeviceTypeId type);

  explicit CachingAllocator(DeviceTypeId type) : type_(type) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t bytes, const Stream& stream);
  void free(void* ptr);
  // Marks the block at `ptr` as used by work on `stream` (which may belong to
  // another device of this type): its free then waits for that work.
  // A stream the backend does not know is not recorded: record_stream warns
  // (its free could not record an event there).
  void record_stream(void* ptr, const Stream& stream);

  // Waits for the frees pending on other streams, then returns every wholly
  // free segment of the device to the backend.
  void empty_cache(DeviceIndex index);
  MemoryStats stats(DeviceIndex index) const;
  void reset_peak_stats(DeviceIndex index);

  static size_t round_size(size_t bytes);

 private:
  struct Block {
    void* ptr;
    size_t size;
    StreamId stream;
    bool small;
    bool allocated = false;
    Block* prev = nullptr;  // neighbours within the same segment
    Block* next = nullptr;
    std::vector<Stream> stream_uses;  // other streams that used it (record_stream)
  };
  // A freed block and the events (one per stream in its stream_uses) it waits for.
  struct PendingFree {
    Block* block;
    std::vector<std::pair<EventId, DeviceIndex>> events;
  };
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const {
      return std::make_tuple(a->small, a->stream, a->size, reinterpret_cast<uintptr_t>(a->ptr)) <
             std::make_tuple(b->small, b->stream, b->size, reinterpret_cast<uintptr_t>(b->ptr));
    }
  };
  struct DeviceState {
    mutable std::mutex mutex;
    std::set<Block*, BlockOrder> free_blocks;
    std::unordered_map<void*, Block*> active;
    std::vector<PendingFree> pending;
    size_t syncing = 0;           // pending frees taken out by synchronize_pending
    std::vector<Block*> leaked;   // freed blocks no event could guard (never reused)
    MemoryStats stats;
  };

  DeviceState& state(DeviceIndex index) const;
  Block* find_free(DeviceState& s, size_t size, bool small, StreamId stream);
  void* raw_allocate(size_t bytes, DeviceIndex index);
  // A block of `size` for `stream`: a new segment, or (after waiting for
  // pending frees) a cached block; throws OutOfMemoryError.
  Block* allocate_block(DeviceState& s, DeviceIndex index, size_t size, bool small, StreamId stream,
                        std::unique_lock<std::mutex>& lock);
  // Returns wholly free segments to the backend; `lock` (held on s.mutex)
  // is released while the backend frees them.
  void release_free_segments(DeviceState& s, DeviceIndex index, std::unique_lock<std::mutex>& lock);
  // Returns a free block to its pool, merged with its free neighbours.
  void return_to_pool(DeviceState& s, Block* block);
  // Returns every pending block whose events have all completed. If a query
  // throws, the blocks handled so far are returned and the others stay
  // pending with their events; the error propagates.
  void process_pending(DeviceState& s);
  // Waits for the events of every pending free (with `lock` released) and
  // returns their blocks; on a failure the blocks not yet waited for stay pending.
  void synchronize_pending(DeviceState& s, std::unique_lock<std::mutex>& lock);
  static void update_pending_stats(DeviceState& s);
  std::string describe_oom(const DeviceState& s, DeviceIndex index, size_t size) const;

  const DeviceTypeId type_;
  EventPool events_{type_};
  mutable std::mutex states_mutex_;
  mutable std::map<DeviceIndex, std::unique_ptr<DeviceState>> states_;
  std::unordered_map<void*, DeviceIndex> owner_;  // ptr -> device, guarded by states_mutex_
};

}  // namespace c10
