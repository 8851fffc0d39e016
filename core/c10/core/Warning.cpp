#include "c10/core/Warning.h"

#include <cstdio>
#include <mutex>
#include <utility>

namespace c10 {
namespace {

std::mutex& handler_mutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

// The registry slot (allowed global state); leaked, since warnings may come
// from destructors that run during exit.
WarningHandler& handler_slot() {
  static auto* handler = new WarningHandler();
  return *handler;
}

void to_stderr(const std::string& message) noexcept {
  std::fprintf(stderr, "torch_core: warning: %s\n", message.c_str());
}

}  // namespace

void warn(const std::string& message) noexcept {
  WarningHandler handler;
  {
    std::lock_guard<std::mutex> lock(handler_mutex());
    handler = handler_slot();
  }
  if (!handler) {
    to_stderr(message);
    return;
  }
  try {
    handler(message);
  } catch (...) {
    to_stderr(message);
  }
}

WarningHandler set_warning_handler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(handler_mutex());
  return std::exchange(handler_slot(), std::move(handler));
}

}  // namespace c10
