#pragma once
// libdebugger's side of plugin_trust_policy: the plugin host's policy it stands for, which
// the model's loaders (OMPD, DMPL, the message-queue DLL, doctor's checks) pass to the
// plugin host. Not a public header: the front ends never name the plugin host's types.

#include "ompdbg/debugger/session/plugin_trust_policy.hpp"
#include "ompdbg/plugins/plugin_library.hpp"

namespace ompdbg::debugger {

struct plugin_trust_policy::impl {
    plugins::plugin_policy policy;
};

/// The plugin host's policy that `trust` stands for.
inline const plugins::plugin_policy& plugin_host_policy(const plugin_trust_policy& trust) {
    return trust.internals().policy;
}

}  // namespace ompdbg::debugger
