#include "c10/core/DeviceRegistry.h"

#include "c10/core/CpuHooks.h"
#include "c10/core/RegistrationSite.h"

#include <stdexcept>

namespace c10 {
namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

DeviceRegistry::DeviceRegistry() {
  entries_.push_back(Entry{"cpu", std::make_unique<CpuHooks>(), "torch_core"});
}

DeviceRegistry& DeviceRegistry::instance() {
  // Leaked on purpose: backends may still call into it from their own static
  // destructors at interpreter exit.
  static auto* registry = new DeviceRegistry();
  return *registry;
}

DeviceTypeId DeviceRegistry::register_device_type(std::string name,
                                                  std::unique_ptr<DeviceHooks> hooks) {
  if (!is_identifier(name)) {
    throw std::invalid_argument("device type name '" + name +
                                "' must be a lowercase identifier ([a-z][a-z0-9_]*)");
  }
  if (!hooks) {
    throw std::invalid_argument("device type '" + name + "' registered without hooks");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& entry : entries_) {
    if (entry.name == name) {
      throw std::invalid_argument(RegistrationSite::collision("device type", name, entry.owner));
    }
  }
  entries_.push_back(Entry{std::move(name), std::move(hooks), RegistrationSite::current()});
  return static_cast<DeviceTypeId>(entries_.size() - 1);
}

DeviceTypeId DeviceRegistry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name == name) {
      return static_cast<DeviceTypeId>(i);
    }
  }
  return -1;
}

const DeviceRegistry::Entry& DeviceRegistry::entry(DeviceTypeId type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (type < 0 || static_cast<size_t>(type) >= entries_.size()) {
    throw std::out_of_range("no device type with id " + std::to_string(type));
  }
  // Entries live in a deque and are never removed, so the reference stays
  // valid after the lock is released, even while other backends register.
  return entries_[type];
}

const std::string& DeviceRegistry::name(DeviceTypeId type) const { return entry(type).name; }

DeviceHooks& DeviceRegistry::hooks(DeviceTypeId type) const { return *entry(type).hooks; }

const std::string& DeviceRegistry::owner(DeviceTypeId type) const { return entry(type).owner; }

std::vector<std::string> DeviceRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& entry : entries_) {
    out.push_back(entry.name);
  }
  return out;
}

void DeviceRegistry::check_usable(const Device& device) const {
  DeviceHooks& device_hooks = hooks(device.type());
  if (!device_hooks.is_available()) {
    throw std::runtime_error("device '" + device.str() +
                             "' is not usable: " + device_hooks.unavailable_reason());
  }
  if (device.index() >= device_hooks.device_count()) {
    throw std::runtime_error("device '" + device.str() + "' does not exist: there are " +
                             std::to_string(device_hooks.device_count()) + " " + name(device.type()) +
                             " device(s)");
  }
}

}  // namespace c10
