// Watchpoints in the process (watchpoint_arming.hpp).
#include "ompdbg/debugger/breakpoints/watchpoint_arming.hpp"

#include <exception>

#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::debugger {

using tracer::watch_kind;
using tracer::watch_mode;

namespace {

bool is_remote(session& s) {
    return s.process() != nullptr && s.process()->connection() != "native";
}

void remove_chain(session& s, watchpoint& w) {
    for (int id : w.chain_ids) {
        try {
            s.process()->remove_watchpoint(id);
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "watchpoint {}: {}", w.number, e.what());
        }
    }
    w.chain_ids.clear();
}

}  // namespace

std::vector<std::pair<std::uint64_t, std::size_t>> watch_pieces(std::uint64_t addr, std::size_t size, watch_mode mode) {
    if (mode == watch_mode::software) {
        return {{addr, size}};
    }
    std::vector<std::pair<std::uint64_t, std::size_t>> out;
    while (size > 0) {
        std::size_t len = 8;
        while (len > 1 && (addr % len != 0 || len > size)) {
            len /= 2;
        }
        out.emplace_back(addr, len);
        addr += len;
        size -= len;
    }
    return out;
}

std::vector<std::byte> watched_bytes(session& s, const watchpoint& w) {
    std::vector<std::byte> b(w.value.val_type.size());
    if (tracer::target* t = s.target()) {
        t->try_read_memory(virt_addr(*w.value.address), b);
    }
    return b;
}

std::optional<std::vector<std::byte>> computed_bytes(session& s, const watchpoint& w, pid_t tid) {
    try {
        if (tid != 0) {
            const auto& frames = s.stack(tid);
            if (!frames.empty()) {
                frame_context ctx(s, tid, frames.front());
                return dwarf::evaluate(w.expression, ctx).bytes;
            }
        }
        frame_context ctx = frame_context::for_selection(s);
        return dwarf::evaluate(w.expression, ctx).bytes;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

void arm_watchpoint(session& s, watchpoint& w) {
    auto& proc = s.require_process();
    if (!w.chain.empty()) {
        // gdb's value chain: every piece of memory the expression's value was read from.
        std::vector<int> ids;
        try {
            for (auto [addr, size] : w.chain) {
                for (auto [a, n] : watch_pieces(addr, size, w.mode)) {
                    ids.push_back(proc.add_watchpoint(virt_addr(a), n, w.kind, w.mode));
                }
            }
        } catch (const std::exception&) {
            for (int id : ids) {
                proc.remove_watchpoint(id);
            }
            throw;
        }
        w.tracer_id = ids.front();
        w.chain_ids.assign(ids.begin() + 1, ids.end());
        if (auto now = computed_bytes(s, w)) {
            w.old_bytes = *now;
        }
        return;
    }
    w.tracer_id = proc.add_watchpoint(virt_addr(*w.value.address), w.value.val_type.size(), w.kind, w.mode);
    w.old_bytes = watched_bytes(s, w);
}

void arm_watchpoint_or_fall_back(session& s, watchpoint& w) {
    try {
        arm_watchpoint(s, w);
    } catch (const std::exception&) {
        if (w.mode != watch_mode::hardware || w.kind != watch_kind::write || !is_remote(s)) {
            throw;
        }
        w.mode = watch_mode::software;
        arm_watchpoint(s, w);
    }
}

void disarm_watchpoint(session& s, watchpoint& w) {
    if (w.tracer_id != 0 && s.process() && s.process()->is_alive()) {
        try {
            s.process()->remove_watchpoint(w.tracer_id);
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "watchpoint {}: {}", w.number, e.what());
        }
        remove_chain(s, w);
    }
    w.tracer_id = 0;
    w.chain_ids.clear();
    if (w.scope_pc != 0 && s.process() && s.process()->is_alive()) {
        try {
            s.process()->remove_breakpoint_site(virt_addr(w.scope_pc));
        } catch (const std::exception&) {
        }
    }
}

bool enable_watchpoint(session& s, int number, bool enable) {
    auto it = s.watchpoints().find(number);
    if (it == s.watchpoints().end()) {
        return false;
    }
    watchpoint& w = it->second;
    if (w.enabled == enable) {
        return true;
    }
    w.enabled = enable;
    if (!s.process() || !s.process()->is_alive()) {
        return true;
    }
    if (!enable) {
        if (w.tracer_id != 0) {
            s.process()->remove_watchpoint(w.tracer_id);
            w.tracer_id = 0;
            remove_chain(s, w);
        }
    } else {
        arm_watchpoint(s, w);   // the value from now on is the one compared with
    }
    return true;
}

bool delete_watchpoint(session& s, int number) {
    auto it = s.watchpoints().find(number);
    if (it == s.watchpoints().end()) {
        return false;
    }
    disarm_watchpoint(s, it->second);
    s.watchpoints().erase(it);
    return true;
}

void delete_all_watchpoints(session& s) {
    for (auto& [n, w] : s.watchpoints()) {
        disarm_watchpoint(s, w);
    }
    s.watchpoints().clear();
}

std::vector<dropped_watchpoint> rearm_watchpoints(session& s) {
    std::vector<dropped_watchpoint> dropped;
    for (auto& [n, w] : s.watchpoints()) {
        w.tracer_id = 0;
        w.chain_ids.clear();
        if (w.scope_pc != 0) {
            dropped.push_back({n, ""});   // its frame belonged to the old process
            continue;
        }
        if (!w.enabled) {
            continue;
        }
        try {
            arm_watchpoint(s, w);
        } catch (const std::exception& e) {
            dropped.push_back({n, e.what()});
        }
    }
    for (const auto& d : dropped) {
        s.watchpoints().erase(d.number);
    }
    return dropped;
}

std::vector<dropped_watchpoint> move_watchpoints_to_child(session& s, pid_t parent_tid) {
    auto& child = s.require_process();
    std::vector<dropped_watchpoint> dropped;
    for (auto& [n, w] : s.watchpoints()) {
        w.tracer_id = 0;
        w.chain_ids.clear();
        try {
            if (w.enabled) {
                auto old = w.old_bytes;
                arm_watchpoint(s, w);
                w.old_bytes = old;   // the value the parent had: a change in the child is reported
            }
            if (w.scope_pc != 0) {
                if (w.scope_tid != parent_tid) {
                    dropped.push_back({n, ""});   // a local of a thread the child does not have
                    continue;
                }
                w.scope_tid = child.pid();
                child.add_breakpoint_site(virt_addr(w.scope_pc));
            }
        } catch (const std::exception& e) {
            dropped.push_back({n, e.what()});
        }
    }
    for (const auto& d : dropped) {
        disarm_watchpoint(s, s.watchpoints()[d.number]);
        s.watchpoints().erase(d.number);
    }
    return dropped;
}

}  // namespace ompdbg::debugger
