// Making a watchpoint (watchpoint_edits.hpp).
#include "ompdbg/debugger/breakpoints/watchpoint_edits.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_arming.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::debugger {

using tracer::watch_kind;
using tracer::watch_mode;

namespace {

using ranges = std::vector<std::pair<std::uint64_t, std::size_t>>;

// Whether /proc/PID/maps here is the map of the process we debug: the pid of a process
// reached through a remote agent is another host's (here it may be anyone's, or no one's).
bool maps_are_ours(pid_t pid) {
    std::ifstream status(fmt::format("/proc/{}/status", pid));
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("TracerPid:", 0) == 0) {
            long tracer = std::atol(line.c_str() + 10);   // the tracing thread: one of ours?
            std::error_code ec;
            return tracer > 0 && std::filesystem::exists(fmt::format("/proc/self/task/{}", tracer), ec);
        }
    }
    return false;
}

// True when `addr` lies in the stack mapping of thread `tid` (a local variable). Without
// the process's map (a remote process), the stack as far as it unwinds: from the red zone
// below sp to the outermost frame's CFA.
bool on_thread_stack(session& s, pid_t tid, std::uint64_t addr) {
    auto* t = s.process() ? s.process()->find_thread(tid) : nullptr;
    if (t == nullptr) {
        return false;
    }
    std::uint64_t sp = t->regs().sp();
    if (!maps_are_ours(s.process()->pid())) {
        const auto& frames = s.stack(tid);
        std::uint64_t top = frames.empty() ? 0 : frames.back().physical.cfa.addr();
        return addr + 128 >= sp && addr < top;
    }
    std::ifstream maps(fmt::format("/proc/{}/maps", s.process()->pid()));
    std::string line;
    while (std::getline(maps, line)) {
        std::uint64_t lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && sp >= lo && sp < hi) {
            return addr >= lo && addr < hi;
        }
    }
    return false;
}

bool is_remote(session& s) {
    return s.process() != nullptr && s.process()->connection() != "native";
}

/// Merges the evaluator's reads into ranges (a struct read member by member is one).
ranges merge_reads(ranges reads) {
    std::sort(reads.begin(), reads.end());
    ranges out;
    for (auto [addr, size] : reads) {
        if (size == 0) {
            continue;
        }
        if (!out.empty() && addr <= out.back().first + out.back().second) {
            auto end = std::max(out.back().first + out.back().second, addr + size);
            out.back().second = static_cast<std::size_t>(end - out.back().first);
        } else {
            out.emplace_back(addr, size);
        }
    }
    return out;
}

/// `watch a + b`: not an lvalue, but a value computed from memory. As gdb, every piece
/// of memory the value was read from is watched, and a write there is reported when the
/// expression's value changed.
int watch_computed(session& s, const watchpoint_request& r, const dwarf::value& v, const ranges& reads,
                   const std::function<watch_mode()>& choose_mode) {
    if (r.kind != watch_kind::write) {
        error::send("Expression cannot be implemented with read/access watchpoint.");
    }
    auto chain = merge_reads(reads);
    for (auto [addr, size] : chain) {
        if (on_thread_stack(s, s.selected_tid(), addr)) {
            error::send(fmt::format("Cannot watch `{}': a value computed from local variables (watch each "
                                    "variable, or use watch -location on each)",
                                    r.expression));
        }
    }
    watchpoint w;
    w.expression = r.expression;
    w.kind = r.kind;
    w.mode = choose_mode();
    w.value = v;
    w.value.bytes.clear();
    w.chain = chain;
    arm_watchpoint_or_fall_back(s, w);
    w.old_bytes = v.bytes;
    w.number = s.next_breakpoint_number();
    const int number = w.number;
    s.watchpoints()[number] = std::move(w);
    return number;
}

}  // namespace

int add_watchpoint(session& s, const watchpoint_request& r, const std::function<watch_mode()>& choose_mode) {
    const std::string& text = r.expression;
    auto& proc = s.require_process();
    frame_context ctx = frame_context::for_selection(s);
    ranges reads;
    ctx.record_reads(&reads);
    dwarf::value v = dwarf::evaluate(text, ctx);
    ctx.record_reads(nullptr);
    // No name in it: a constant (gdb's message); names but no lvalue: say why.
    bool has_name = std::any_of(text.begin(), text.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
    });
    if (!v.address && !has_name) {
        error::send(fmt::format("Cannot watch constant value `{}'.", text));
    }
    if (!v.address) {
        if (v.dwarf_register || !v.register_name.empty() || ctx.read_named_register()) {
            error::send(fmt::format("Cannot watch `{}': it lives in a register, not in memory.", text));
        }
        if (reads.empty()) {
            error::send(fmt::format("Cannot watch `{}': it is not a value in memory (an lvalue).", text));
        }
        return watch_computed(s, r, v, reads, choose_mode);
    }
    if (v.bit_size) {
        error::send(fmt::format("Cannot watch the bit-field `{}'; watch the whole structure member instead.", text));
    }
    std::size_t size = v.val_type.size();
    watch_mode mode = choose_mode();
    // One debug register covers 1, 2, 4 or 8 bytes; software watchpoints (guarded pages,
    // single steps on a remote process) watch a struct or an array as a whole, as gdb's do.
    bool one_register = size != 0 && size <= 8 && (size & (size - 1)) == 0;
    if (mode == watch_mode::hardware && !one_register && r.kind == watch_kind::write && is_remote(s)) {
        mode = watch_mode::software;
    }
    if (mode == watch_mode::hardware && !one_register) {
        error::send(fmt::format("Cannot watch `{}': it is {} bytes wide, and one watchpoint covers 1, 2, 4 or 8 "
                                "bytes (one debug register). Watch a member or an element instead.",
                                text, size));
    }
    if (size == 0) {
        error::send(fmt::format("Cannot watch `{}': it has no size.", text));
    }
    watchpoint w;
    w.expression = r.location ? "-location " + text : text;
    w.kind = r.kind;
    w.mode = mode;
    w.value = v;
    w.value.bytes.clear();
    arm_watchpoint_or_fall_back(s, w);
    w.number = s.next_breakpoint_number();
    // Locals end with their frame: plant a breakpoint where it returns (gdb deletes the
    // watchpoint there). -location watches the address whatever happens to the frame.
    if (!r.location && ctx.has_frame() && on_thread_stack(s, s.selected_tid(), *v.address)) {
        const auto& frames = s.stack(s.selected_tid());
        std::size_t level = static_cast<std::size_t>(s.selected_frame());
        if (level + 1 < frames.size()) {
            w.scope_pc = frames[level + 1].pc();
            w.scope_cfa = frames[level].physical.cfa.addr();
            w.scope_tid = s.selected_tid();
            proc.add_breakpoint_site(virt_addr(w.scope_pc));
        }
    }
    const int number = w.number;
    s.watchpoints()[number] = std::move(w);
    return number;
}

}  // namespace ompdbg::debugger
