#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "c10/core/Device.h"

namespace c10 {

// What a backend tells core about its device type. Core calls these; it
// never calls a vendor runtime directly.
class DeviceHooks {
 public:
  virtual ~DeviceHooks() = default;

  // Whether the runtime initialised and found at least one device.
  virtual bool is_available() const = 0;
  virtual DeviceIndex device_count() const = 0;
  virtual DeviceIndex current_device() const = 0;
  virtual void set_device(DeviceIndex index) = 0;
  virtual void synchronize(DeviceIndex index) = 0;

  // Why the device cannot be used (empty when it can): shown in errors, e.g.
  // "no device found (driver reports: ...)".
  virtual std::string unavailable_reason() const = 0;
};

// The process-wide table of device types. Several backends may register in
// one process; each name is registered once.
class DeviceRegistry {
 public:
  static DeviceRegistry& instance();

  // Registers a device type and returns its id. Throws std::invalid_argument
  // if the name is taken or not a lowercase identifier.
  DeviceTypeId register_device_type(std::string name, std::unique_ptr<DeviceHooks> hooks);

  // Returns the id, or -1 when no backend registered that name.
  DeviceTypeId find(std::string_view name) const;

  const std::string& name(DeviceTypeId type) const;
  DeviceHooks& hooks(DeviceTypeId type) const;
  std::vector<std::string> names() const;

  // Throws std::runtime_error naming the device and the backend's reason
  // when the device cannot be used.
  void check_usable(const Device& device) const;

 private:
  DeviceRegistry();

  struct Entry {
    std::string name;
    std::unique_ptr<DeviceHooks> hooks;
  };

  const Entry& entry(DeviceTypeId type) const;

  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
};

}  // namespace c10
