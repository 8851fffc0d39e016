#pragma once

#include <functional>
#include <string>

namespace c10 {

// Warnings from core's runtime (PyTorch's TORCH_WARN): something went wrong
// that the caller cannot be told through an exception, e.g. in a free that
// runs from a destructor, or that is worth telling without failing the call.
//
// The handler is a process-wide registry slot: torch_core._C installs one
// that raises a Python RuntimeWarning when the calling thread holds the GIL;
// the default (and the fallback when a handler throws) writes to stderr.
// Never call warn() while holding a lock a handler could need.
using WarningHandler = std::function<void(const std::string& message)>;

void warn(const std::string& message) noexcept;

// Installs `handler` (an empty one restores the default) and returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace c10
