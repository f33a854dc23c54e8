// The model's plugin trust policy (session/plugin_trust_policy.hpp): a copyable holder of
// the plugin host's policy, so that the front ends configure it without its header.

#include "ompdbg/debugger/session/plugin_trust_policy.hpp"

#include "session/plugin_trust_host.hpp"

namespace ompdbg::debugger {

plugin_trust_policy::plugin_trust_policy() : impl_(std::make_unique<impl>()) {}

plugin_trust_policy::~plugin_trust_policy() = default;

plugin_trust_policy::plugin_trust_policy(const plugin_trust_policy& other)
    : impl_(std::make_unique<impl>(*other.impl_)) {}

plugin_trust_policy& plugin_trust_policy::operator=(const plugin_trust_policy& other) {
    if (this != &other) {
        *impl_ = *other.impl_;
    }
    return *this;
}

void plugin_trust_policy::allow_directory(const std::filesystem::path& dir) {
    impl_->policy.allow_directory(dir);
}

std::optional<std::string> plugin_trust_policy::refusal(const std::filesystem::path& file) const {
    return impl_->policy.refusal(file);
}

}  // namespace ompdbg::debugger
