#include "c10/core/CachingAllocator.h"

#include <algorithm>
#include <exception>
#include <vector>

#include "c10/core/DeviceRegistry.h"
#include "c10/core/Warning.h"

namespace c10 {
namespace {

std::string mib(int64_t bytes) {
  return std::to_string(bytes / (1 << 20)) + "." + std::to_string((bytes % (1 << 20)) * 10 / (1 << 20)) +
         " MiB";
}

std::string describe(const Stream& stream) { return stream.device.str() + " stream " + std::to_string(stream.id); }

}  // namespace

CachingAllocator& CachingAllocator::for_device_type(DeviceTypeId type) {
  // A registry (allowed global state): allocators live as long as the process,
  // since tensors may be freed by Python's last reference at exit.
  static std::mutex mutex;
  static auto* allocators = new std::map<DeviceTypeId, std::unique_ptr<CachingAllocator>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*allocators)[type];
  if (!slot) {
    slot = std::make_unique<CachingAllocator>(type);
  }
  return *slot;
}

CachingAllocator::~CachingAllocator() {
  for (auto& [index, s] : states_) {
    for (Block* b : s->free_blocks) {
      delete b;
    }
    for (auto& [ptr, b] : s->active) {
      delete b;
    }
    for (PendingFree& p : s->pending) {
      delete p.block;
    }
    for (Block* b : s->leaked) {
      delete b;
    }
  }
}

size_t CachingAllocator::round_size(size_t bytes) {
  return std::max<size_t>(kRound, (bytes + kRound - 1) / kRound * kRound);
}

CachingAllocator::DeviceState& CachingAllocator::state(DeviceIndex index) const {
  std::lock_guard<std::mutex> lock(states_mutex_);
  auto& slot = states_[index];
  if (!slot) {
    slot = std::make_unique<DeviceState>();
  }
  return *slot;
}

CachingAllocator::Block* CachingAllocator::find_free(DeviceState& s, size_t size, bool small,
                                                     StreamId stream) {
  Block key{nullptr, size, stream, small};
  const auto it = s.free_blocks.lower_bound(&key);
  if (it == s.free_blocks.end() || (*it)->small != small || (*it)->stream != stream) {
    return nullptr;
  }
  Block* block = *it;
  s.free_blocks.erase(it);
  return block;
}

void* CachingAllocator::raw_allocate(size_t bytes, DeviceIndex index) {
  return DeviceRegistry::instance().hooks(type_).raw_allocate(bytes, index);
}

void CachingAllocator::release_free_segments(DeviceState& s, DeviceIndex index,
                                             std::unique_lock<std::mutex>& lock) {
  std::vector<void*> segments;
  for (auto it = s.free_blocks.begin(); it != s.free_blocks.end();) {
    Block* b = *it;
    if (b->prev == nullptr && b->next == nullptr) {
      segments.push_back(b->ptr);
      s.stats.reserved -= static_cast<int64_t>(b->size);
      s.stats.num_raw_frees++;
      it = s.free_blocks.erase(it);
      delete b;
    } else {
      ++it;
    }
  }
  s.stats.cached_blocks = static_cast<int64_t>(s.free_blocks.size());
  if (segments.empty()) {
    return;
  }
  // raw_free waits for the device's queued work (as a real runtime's free does), and that
  // work may drop the last reference to a tensor, which frees into this
  // state: release the lock meanwhile. The segments are no longer in any pool.
  auto& hooks = DeviceRegistry::instance().hooks(type_);
  lock.unlock();
  for (void* ptr : segments) {
    hooks.raw_free(ptr, index);
  }
  lock.lock();
}

std::string CachingAllocator::describe_oom(const DeviceState& s, DeviceIndex index,
                                           size_t size) const {
  const Device device(type_, index);
  return device.str() + " is out of memory: tried to allocate " + mib(static_cast<int64_t>(size)) +
         " (" + std::to_string(size) + " bytes); " + mib(s.stats.allocated) +
         " is allocated by tensors and " + mib(s.stats.reserved) +
         " reserved in total by the caching allocator";
}

void* CachingAllocator::allocate(size_t bytes, const Stream& stream) {
  const DeviceIndex index = stream.device.index();
  DeviceState& s = state(index);
  const size_t size = round_size(bytes);
  const bool small = size <= kSmallRequest;

  std::unique_lock<std::mutex> lock(s.mutex);
  process_pending(s);
  Block* block = find_free(s, size, small, stream.id);
  if (block == nullptr) {
    block = allocate_block(s, index, size, small, stream.id, lock);
  }

  // Keep the remainder when it can serve another request of this pool.
  const size_t remainder = block->size - size;
  if (remainder >= (small ? kRound : kSmallRequest + 1)) {
    auto* rest = new Block{static_cast<char*>(block->ptr) + size, remainder, block->stream, small};
    rest->prev = block;
    rest->next = block->next;
    if (block->next != nullptr) {
      block->next->prev = rest;
    }
    block->next = rest;
    block->size = size;
    s.free_blocks.insert(rest);
    s.stats.num_splits++;
  }

  block->allocated = true;
  s.active[block->ptr] = block;
  s.stats.allocated += static_cast<int64_t>(block->size);
  s.stats.max_allocated = std::max(s.stats.max_allocated, s.stats.allocated);
  s.stats.num_allocs++;
  s.stats.cached_blocks = static_cast<int64_t>(s.free_blocks.size());
  {
    std::lock_guard<std::mutex> owners(states_mutex_);
    owner_[block->ptr] = index;
  }
  return block->ptr;
}

CachingAllocator::Block* CachingAllocator::allocate_block(DeviceState& s, DeviceIndex index, size_t size,
                                                          bool small, StreamId stream,
                                                          std::unique_lock<std::mutex>& lock) {
  const size_t segment = small ? kSegment : (size + kSegment - 1) / kSegment * kSegment;
  void* ptr = raw_allocate(segment, index);
  if (ptr == nullptr) {
    release_free_segments(s, index, lock);
    ptr = raw_allocate(segment, index);
  }
  if (ptr == nullptr && !s.pending.empty()) {
    // Memory freed on this device may only be waiting for other streams'
    // work: wait for it (as PyTorch synchronizes its events before giving
    // up), then reuse a returned block or the segments that became free.
    synchronize_pending(s, lock);
    if (Block* block = find_free(s, size, small, stream)) {
      return block;
    }
    release_free_segments(s, index, lock);
    ptr = raw_allocate(segment, index);
  }
  if (ptr == nullptr) {
    s.stats.num_ooms++;
    throw OutOfMemoryError(describe_oom(s, index, size));
  }
  s.stats.num_raw_allocs++;
  s.stats.reserved += static_cast<int64_t>(segment);
  s.stats.max_reserved = std::max(s.stats.max_reserved, s.stats.reserved);
  return new Block{ptr, segment, stream, small};
}

void CachingAllocator::free(void* ptr) {
  DeviceIndex index;
  {
    std::lock_guard<std::mutex> owners(states_mutex_);
    const auto it = owner_.find(ptr);
    if (it == owner_.end()) {
      throw std::invalid_argument("CachingAllocator::free: pointer was not allocated here");
    }
    index = it->second;
    owner_.erase(it);
  }
  DeviceState& s = state(index);
  std::string warning;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.active.find(ptr);
    Block* block = it->second;
    s.active.erase(it);
    block->allocated = false;
    s.stats.allocated -= static_cast<int64_t>(block->size);
    s.stats.num_frees++;

    if (block->stream_uses.empty()) {
      return_to_pool(s, block);
      return;
    }
    // Other streams may still read or write the block: mark where each of them
    // is now, and hand the block back only once all those marks have passed.
    PendingFree pending{block, {}};
    auto& hooks = DeviceRegistry::instance().hooks(type_);
    const Stream* failed = nullptr;
    try {
      for (const Stream& use : block->stream_uses) {
        failed = &use;
        const EventId event = events_.acquire(use.device.index());
        pending.events.emplace_back(event, use.device.index());
        hooks.record_event(event, use);
      }
      failed = nullptr;
    } catch (const std::exception& error) {
      warning = error.what();
    } catch (...) {
      warning = "unknown error";
    }
    if (failed == nullptr) {
      block->stream_uses.clear();
      s.pending.push_back(std::move(pending));
      update_pending_stats(s);
      return;
    }
    // Without an event nothing tells when the other stream is done: keep the
    // block out of every pool (a leak, never a reuse under a running kernel),
    // and say so. free() runs from tensor destructors, so it must not throw.
    for (const auto& [event, device] : pending.events) {
      events_.discard(event, device);
    }
    warning = Device(type_, index).str() + ": a freed block of " + std::to_string(block->size) +
              " bytes is never reused: recording an event on " + describe(*failed) +
              ", which used it, failed (" + warning + ")";
    s.leaked.push_back(block);
  }
  warn(warning);  // outside the lock: the handler may run Python
}

void CachingAllocator::record_stream(void* ptr, const Stream& stream) {
  DeviceIndex index;
  {
    std::lock_guard<std::mutex> owners(states_mutex_);
    const auto it = owner_.find(ptr);
    if (it == owner_.end()) {
      throw std::invalid_argument("CachingAllocator::record_stream: pointer was not allocated here");
    }
    index = it->second;
  }
  if (stream.device.type() != type_) {
    throw std::invalid_argument("record_stream: " + stream.device.str() + " is not a " +
                                Device(type_, index).type_name() + " device");
  }
  DeviceState& s = state(index);
  const auto recorded = [&](const Block* block) {
    return (stream.device.index() == index && stream.id == block->stream) ||  // its own stream orders its reuse
           std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) != block->stream_uses.end();
  };
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (recorded(s.active.at(ptr))) {
      return;
    }
  }
  // The free records an event on every recorded stream; one the backend does
  // not know would fail there and leak the block. Check once per block and
  // stream (query_stream throws for a stream that does not exist).
  try {
    DeviceRegistry::instance().hooks(type_).query_stream(stream);
  } catch (const std::exception& error) {
    warn("record_stream: " + describe(stream) + " cannot be used (" + error.what() +
         "); the tensor's free will not wait for it");
    return;
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  Block* block = s.active.at(ptr);  // still allocated: the caller holds the tensor
  if (!recorded(block)) {
    block->stream_uses.push_back(stream);
  }
}

void CachingAllocator::process_pending(DeviceState& s) {
  if (s.pending.empty()) {
    return;
  }
  auto& hooks = DeviceRegistry::instance().hooks(type_);
  // Entries leave the list one at a time, after their events are back in the
  // pool and before their block is returned: if a query throws, every entry
  // is either returned or still pending with live events.
  struct UpdateStats {
    DeviceState& s;
    ~UpdateStats() { update_pending_stats(s); }
  } update{s};
  for (auto it = s.pending.begin(); it != s.pending.end();) {
    const bool done = std::all_of(it->events.begin(), it->events.end(),
                                  [&](const auto& e) { return hooks.query_event(e.first, e.second); });
    if (!done) {
      ++it;
      continue;
    }
    PendingFree p = std::move(*it);
    it = s.pending.erase(it);
    for (const auto& [event, device] : p.events) {
      events_.release(event, device);
    }
    return_to_pool(s, p.block);
  }
}

void CachingAllocator::synchronize_pending(DeviceState& s, std::unique_lock<std::mutex>& lock) {
  if (s.pending.empty()) {
    return;
  }
  std::vector<PendingFree> waiting;
  waiting.swap(s.pending);
  s.syncing += waiting.size();
  auto& hooks = DeviceRegistry::instance().hooks(type_);
  // The work these events wait for may drop the last reference to a tensor,
  // which frees into this state: wait without the lock.
  lock.unlock();
  size_t synchronized = 0;
  std::exception_ptr error;
  try {
    for (; synchronized < waiting.size(); ++synchronized) {
      for (const auto& [event, device] : waiting[synchronized].events) {
        hooks.synchronize_event(event, device);
      }
    }
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  s.syncing -= waiting.size();
  for (size_t i = 0; i < waiting.size(); ++i) {
    if (i < synchronized) {
      for (const auto& [event, device] : waiting[i].events) {
        events_.release(event, device);
      }
      return_to_pool(s, waiting[i].block);
    } else {
      s.pending.push_back(std::move(waiting[i]));
    }
  }
  update_pending_stats(s);
  if (error) {
    std::rethrow_exception(error);
  }
}

void CachingAllocator::update_pending_stats(DeviceState& s) {
  s.stats.pending_frees = static_cast<int64_t>(s.pending.size() + s.syncing);
}

void CachingAllocator::return_to_pool(DeviceState& s, Block* block) {
  // Merge with free neighbours of the same segment.
  for (Block* neighbour : {block->prev, block->next}) {
    if (neighbour == nullptr || neighbour->allocated || s.free_blocks.count(neighbour) == 0) {
      continue;
    }
    s.free_blocks.erase(neighbour);
    if (neighbour == block->prev) {
      neighbour->size += block->size;
      neighbour->next = block->next;
      if (block->next != nullptr) {
        block->next->prev = neighbour;
      }
      delete block;
      block = neighbour;
    } else {
      block->size += neighbour->size;
      block->next = neighbour->next;
      if (neighbour->next != nullptr) {
        neighbour->next->prev = block;
      }
      delete neighbour;
    }
    s.stats.num_merges++;
  }
  s.free_blocks.insert(block);
  s.stats.cached_blocks = static_cast<int64_t>(s.free_blocks.size());
}

void CachingAllocator::empty_cache(DeviceIndex index) {
  DeviceState& s = state(index);
  std::unique_lock<std::mutex> lock(s.mutex);
  // As PyTorch's empty_cache: blocks whose frees wait for other streams are
  // returned first (waiting for that work), so their segments go back too.
  synchronize_pending(s, lock);
  release_free_segments(s, index, lock);
}

MemoryStats CachingAllocator::stats(DeviceIndex index) const {
  DeviceState& s = state(index);
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.stats;
}

void CachingAllocator::reset_peak_stats(DeviceIndex index) {
  DeviceState& s = state(index);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stats.max_allocated = s.stats.allocated;
  s.stats.max_reserved = s.stats.reserved;
}

}  // namespace c10
