// gdb's siginfo layout for x86-64 Linux, field by field (see siginfo_type.hpp).
#include "ompdbg/debugger/run/siginfo_type.hpp"

#include <signal.h>

#include <cstring>

#include <string>
#include <utility>
#include <vector>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

namespace {

using dwarf::base_encoding;
using dwarf::synthetic_field;
using dwarf::type;
using dwarf::type_kind;

type record(type_kind kind, std::string tag, std::uint64_t size, std::vector<synthetic_field> fields) {
    return type::record_of(kind, std::move(tag), size, std::move(fields));
}

}  // namespace

dwarf::type gdb_siginfo_type() {
    const type int_t = type::make_base("int", 4, base_encoding::signed_int);
    const type uint_t = type::make_base("unsigned int", 4, base_encoding::unsigned_int);
    const type long_t = type::make_base("long", 8, base_encoding::signed_int);
    const type short_t = type::make_base("short", 2, base_encoding::signed_int);
    const type void_ptr = type::pointer_to(type::void_type());
    const type sigval = record(type_kind::union_, "sigval_t", 8, {{"sival_int", int_t, 0}, {"sival_ptr", void_ptr, 0}});
    // gdb's si_pad_size on a 64-bit target: 128 / sizeof(int) - 4.
    const type pad = type::array_of(int_t, 28);
    const type kill = record(type_kind::structure, "", 8, {{"si_pid", int_t, 0}, {"si_uid", uint_t, 4}});
    const type timer = record(type_kind::structure, "", 16,
                              {{"si_tid", int_t, 0}, {"si_overrun", int_t, 4}, {"si_sigval", sigval, 8}});
    const type rt = record(type_kind::structure, "", 16,
                           {{"si_pid", int_t, 0}, {"si_uid", uint_t, 4}, {"si_sigval", sigval, 8}});
    const type sigchld = record(type_kind::structure, "", 32,
                                {{"si_pid", int_t, 0},
                                 {"si_uid", uint_t, 4},
                                 {"si_status", int_t, 8},
                                 {"si_utime", long_t, 16},
                                 {"si_stime", long_t, 24}});
    const type addr_bnd = record(type_kind::structure, "", 16, {{"_lower", void_ptr, 0}, {"_upper", void_ptr, 8}});
    const type sigfault = record(type_kind::structure, "", 32,
                                 {{"si_addr", void_ptr, 0}, {"_addr_lsb", short_t, 8}, {"_addr_bnd", addr_bnd, 16}});
    const type sigpoll = record(type_kind::structure, "", 16, {{"si_band", long_t, 0}, {"si_fd", int_t, 8}});
    const type sigsys = record(type_kind::structure, "", 16,
                               {{"_call_addr", void_ptr, 0}, {"_syscall", int_t, 8}, {"_arch", uint_t, 12}});
    const type sifields = record(type_kind::union_, "", 112,
                                 {{"_pad", pad, 0},
                                  {"_kill", kill, 0},
                                  {"_timer", timer, 0},
                                  {"_rt", rt, 0},
                                  {"_sigchld", sigchld, 0},
                                  {"_sigfault", sigfault, 0},
                                  {"_sigpoll", sigpoll, 0},
                                  {"_sigsys", sigsys, 0}});
    return record(type_kind::structure, "siginfo", 128,
                  {{"si_signo", int_t, 0}, {"si_errno", int_t, 4}, {"si_code", int_t, 8}, {"_sifields", sifields, 16}});
}

std::optional<dwarf::value> siginfo_value(session& s, pid_t tid) {
    tracer::process* p = s.process();
    if (p == nullptr || !p->is_alive()) {
        return std::nullopt;   // gdb: void without a process
    }
    // gdb reads the stop's siginfo from the kernel: a breakpoint's or a step's SIGTRAP
    // too. A thread that stopped with a signal and ran since only for us (a function
    // called from the debugger, the signal still to be delivered) shows that signal's, as
    // gdb restores the siginfo after a call.
    auto live = p->stop_siginfo(tid);
    auto last = p->last_siginfo(tid);
    std::optional<siginfo_t> si = live;
    if (!live || (live->si_signo == SIGTRAP && last && p->pending_signal(tid) == last->si_signo)) {
        si = last;
    }
    if (!si) {
        error::send("Unable to read siginfo");
    }
    // gdb's own layout (its field names, not the C library's), as gdb shows it.
    dwarf::value v;
    v.val_type = gdb_siginfo_type();
    v.bytes.resize(sizeof(siginfo_t));
    std::memcpy(v.bytes.data(), &*si, sizeof(siginfo_t));
    return v;
}

}  // namespace ompdbg::debugger
