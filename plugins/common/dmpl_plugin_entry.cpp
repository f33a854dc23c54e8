// The entry points both of ompdbg's DMPL plugins implement the same way: keeping the
// debugger's callback table (DMPL_initialise) and the interface version. Compiled into each
// plugin (an object library): every plugin has its own copy of `cb`.

#include "dmpl_plugin_util.hpp"

namespace ompdbg::dmpl_plugin {

const DMPL_callbacks_t* cb = nullptr;

}  // namespace ompdbg::dmpl_plugin

DMPL_EXPORT int DMPL_initialise(const DMPL_callbacks_t* callbacks) {
    if (callbacks == nullptr) {
        return ompdbg::dmpl_plugin::rc_bad_argument;
    }
    ompdbg::dmpl_plugin::cb = callbacks;
    return DMPL_ok;
}

DMPL_EXPORT int DMPL_version_compatibility(void) {
    return XLD_INTERFACE_COMPATIBILITY;
}
