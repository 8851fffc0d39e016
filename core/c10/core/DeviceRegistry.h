#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "c10/core/Device.h"
#include "c10/core/DeviceHooks.h"

namespace c10 {

// The process-wide table of device types. Several backends may register in
// one process; each name is registered once.
class DeviceRegistry {
 public:
  static DeviceRegistry& instance();

  // Registers a device type and returns its id. Throws std::invalid_argument
  // if the name is taken (naming the holder and the RegistrationSite's owner)
  // or not a lowercase identifier.
  DeviceTypeId register_device_type(std::string name, std::unique_ptr<DeviceHooks> hooks);

  // Returns the id, or -1 when no backend registered that name.
  DeviceTypeId find(std::string_view name) const;

  const std::string& name(DeviceTypeId type) const;
  DeviceHooks& hooks(DeviceTypeId type) const;
  std::vector<std::string> names() const;
  // The backend that registered the type (its RegistrationSite).
  const std::string& owner(DeviceTypeId type) const;

  // Throws std::runtime_error naming the device and the backend's reason
  // when the device cannot be used.
  void check_usable(const Device& device) const;

 private:
  DeviceRegistry();

  struct Entry {
    std::string name;
    std::unique_ptr<DeviceHooks> hooks;
    std::string owner;  // the RegistrationSite open when it registered
  };

  const Entry& entry(DeviceTypeId type) const;

  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
};

}  // namespace c10
