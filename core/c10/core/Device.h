#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace c10 {

// Device types are not an enum: backends register them at run time by name
// (see DeviceRegistry.h), so core never has to know which ones exist. The id
// is an index into the registry; 0 is always "cpu".
using DeviceTypeId = int16_t;
using DeviceIndex = int16_t;

constexpr DeviceTypeId kCpuDeviceType = 0;

// A device type plus an index in that type's index space ("emu:1").
class Device {
 public:
  Device(DeviceTypeId type, DeviceIndex index = 0);

  // Parses "cpu", "emu", "emu:1". Throws std::invalid_argument naming the
  // problem for malformed text, an unregistered type or an index out of range.
  static Device parse(std::string_view text);

  DeviceTypeId type() const { return type_; }
  DeviceIndex index() const { return index_; }
  bool is_cpu() const { return type_ == kCpuDeviceType; }
  const std::string& type_name() const;

  // "cpu" for the CPU, "<type>:<index>" otherwise.
  std::string str() const;

  bool operator==(const Device& other) const {
    return type_ == other.type_ && index_ == other.index_;
  }
  bool operator!=(const Device& other) const { return !(*this == other); }

 private:
  DeviceTypeId type_;
  DeviceIndex index_;
};

}  // namespace c10
