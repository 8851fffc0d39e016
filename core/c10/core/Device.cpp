#include "c10/core/Device.h"

#include <charconv>
#include <stdexcept>

#include "c10/core/DeviceRegistry.h"

namespace c10 {

Device::Device(DeviceTypeId type, DeviceIndex index) : type_(type), index_(index) {}

Device Device::parse(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view type_name = text.substr(0, colon);
  auto& registry = DeviceRegistry::instance();
  const DeviceTypeId type = registry.find(type_name);
  if (type < 0) {
    std::string known;
    for (const auto& name : registry.names()) {
      known += (known.empty() ? "" : ", ") + name;
    }
    throw std::invalid_argument("unknown device type '" + std::string(type_name) + "' in '" +
                                std::string(text) + "' (registered: " + known +
                                "); is its backend imported?");
  }
  if (colon == std::string_view::npos) {
    return Device(type, 0);
  }
  const std::string_view digits = text.substr(colon + 1);
  int index = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || index < 0 ||
      index > 32767) {
    throw std::invalid_argument("invalid device index in '" + std::string(text) +
                                "': expected '<type>:<non-negative integer>'");
  }
  if (type == kCpuDeviceType && index != 0) {
    throw std::invalid_argument("device 'cpu' has only index 0, got '" + std::string(text) + "'");
  }
  return Device(type, static_cast<DeviceIndex>(index));
}

const std::string& Device::type_name() const { return DeviceRegistry::instance().name(type_); }

std::string Device::str() const {
  if (is_cpu()) {
    return type_name();
  }
  return type_name() + ":" + std::to_string(index_);
}

}  // namespace c10
