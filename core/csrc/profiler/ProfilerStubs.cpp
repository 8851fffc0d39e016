#include "csrc/profiler/ProfilerStubs.h"

#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "c10/core/DeviceRegistry.h"
#include "c10/core/RegistrationSite.h"

namespace torch_core::profiler {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<c10::DeviceTypeId, std::unique_ptr<ProfilerStubs>> stubs;
  std::map<c10::DeviceTypeId, std::string> owners;
};

Registry& registry() {
  static auto* r = new Registry();  // leaked: backends may call in during shutdown
  return *r;
}

}  // namespace

void register_profiler_stubs(c10::DeviceTypeId type, std::unique_ptr<ProfilerStubs> stubs) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.stubs.count(type) != 0) {
    throw std::invalid_argument(c10::RegistrationSite::collision(
        "profiler stubs for device type", c10::DeviceRegistry::instance().name(type), r.owners[type]));
  }
  r.stubs.emplace(type, std::move(stubs));
  r.owners.emplace(type, c10::RegistrationSite::current());
}

ProfilerStubs* profiler_stubs(c10::DeviceTypeId type) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.stubs.find(type);
  return it == r.stubs.end() ? nullptr : it->second.get();
}

void for_each_profiler_stubs(const std::function<void(ProfilerStubs&)>& fn) {
  std::vector<ProfilerStubs*> all;
  {
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& [type, stubs] : r.stubs) {
      all.push_back(stubs.get());
    }
  }
  for (ProfilerStubs* stubs : all) {
    fn(*stubs);
  }
}

}  // namespace torch_core::profiler
