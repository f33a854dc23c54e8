#include "ompdbg/debugger/run/process_events.hpp"

#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

bool catches_process_event(session& s, const tracer::stop_reason& why) {
    if (why.kind == tracer::stop_kind::syscall_entry || why.kind == tracer::stop_kind::syscall_exit) {
        for (const auto& c : s.process_events().catchpoints) {
            if (c.enabled && c.catches_syscall(why.syscall_number)) {
                return true;
            }
        }
        return false;
    }
    if (why.kind == tracer::stop_kind::exec) {
        return s.process_events().find("exec") != nullptr;
    }
    if (why.kind == tracer::stop_kind::fork) {
        return s.process_events().find(why.is_vfork ? "vfork" : "fork") != nullptr;
    }
    return false;
}

}  // namespace ompdbg::debugger
