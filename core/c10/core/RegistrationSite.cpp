#include "c10/core/RegistrationSite.h"

#include <utility>

namespace c10 {
namespace {

// Per thread: two extensions imported on two threads do not see each other's site.
thread_local std::string current_owner;

}  // namespace

RegistrationSite::RegistrationSite(std::string owner) : previous_(std::move(current_owner)) {
  current_owner = std::move(owner);
}

RegistrationSite::~RegistrationSite() { current_owner = std::move(previous_); }

std::string RegistrationSite::current() {
  return current_owner.empty() ? std::string("an unnamed extension") : current_owner;
}

std::string RegistrationSite::collision(const std::string& what, const std::string& name,
                                        const std::string& holder) {
  return what + " '" + name + "' is already registered by " + holder + "; " + current() +
         " cannot register it too (names are unique across backends)";
}

}  // namespace c10
