#pragma once

#include <string>

namespace c10 {

// Who is registering into core's process-wide tables (device types, profiler
// stubs, fused-kernel launchers). A backend's extension opens one for the
// duration of its registrations:
//
//   c10::RegistrationSite site("torch_acme");
//   c10::DeviceRegistry::instance().register_device_type("acme", ...);
//
// The tables record the owner, so a second backend claiming a name gets an
// error naming both backends instead of a silent replacement or an anonymous
// "already registered".
class RegistrationSite {
 public:
  explicit RegistrationSite(std::string owner);
  ~RegistrationSite();
  RegistrationSite(const RegistrationSite&) = delete;
  RegistrationSite& operator=(const RegistrationSite&) = delete;

  // The innermost open site's owner on this thread, or "an unnamed extension".
  static std::string current();

  // "<what> '<name>' is already registered by <holder>; <current()> cannot register it too".
  static std::string collision(const std::string& what, const std::string& name, const std::string& holder);

 private:
  std::string previous_;
};

}  // namespace c10
