// Watchpoints of a process on another host. Hardware ones are the agent's debug registers
// (Z2-Z4). Software ones are the fallback where those cannot serve (every register in use,
// a value wider than 8 bytes, `set can-use-hw-watchpoints 0`): the agent cannot change the
// page protections inside the process that local software watchpoints rely on, so the
// process runs one instruction at a time (vCont;s for one thread, the others continue) and
// the watched bytes are compared after each step, as gdb does on a remote target.
#include <csignal>
#include <cstdlib>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/remote_process.hpp"

namespace ompdbg::tracer {

namespace {

int z_type(watch_kind k) {
    return k == watch_kind::write ? 2 : k == watch_kind::read ? 3 : 4;
}

/// The largest value a software watchpoint compares (as a local one guards).
constexpr std::size_t soft_watch_limit = 64 * 1024;

/// The shortest slice of single steps a wait makes: a group polls its remote members with
/// a timeout of 0 between sleeps, and one step per poll would crawl.
constexpr int soft_slice_ms = 20;

}  // namespace

int remote_process::add_watchpoint(virt_addr addr, std::size_t size, watch_kind kind, watch_mode mode) {
    require_alive();
    if (mode == watch_mode::software) {
        // Only a change of value shows between two steps: no read is seen (gdb's message).
        if (kind != watch_kind::write) {
            error::send("Software read/access watchpoints not supported.");
        }
        if (size == 0 || size > soft_watch_limit) {
            error::send(fmt::format("A software watchpoint covers 1 byte to {} KiB.", soft_watch_limit / 1024));
        }
        soft_watch w{addr.addr(), std::vector<std::byte>(size)};
        if (rsp().read_memory(pid_, w.addr, w.bytes) != size) {
            error::send(fmt::format("Cannot access memory at address {:#x}", w.addr));
        }
        int id = next_watch_id_++;
        soft_watches_[id] = std::move(w);
        return id;
    }
    if (size != 1 && size != 2 && size != 4 && size != 8) {
        error::send("A hardware watchpoint covers 1, 2, 4 or 8 bytes.");
    }
    int type = z_type(kind);
    std::string r = rsp().insert_watchpoint(pid_, type, addr.addr(), size);
    if (r.empty() && kind == watch_kind::read) {
        // x86 debug registers have no read-only mode (gdbserver has no Z3 there): an access
        // watchpoint, whose writes the caller tells apart by the value, as locally.
        type = 4;
        r = rsp().insert_watchpoint(pid_, type, addr.addr(), size);
    }
    if (r.empty()) {
        error::send("The remote agent has no hardware watchpoints (it does not support the Z2-Z4 packets).");
    }
    if (r != "OK") {
        error::send(fmt::format("The remote agent could not insert a hardware watchpoint at {:#x} ({}): its debug "
                                "registers may all be in use.",
                                addr.addr(), r.substr(0, 20)));
    }
    int id = next_watch_id_++;
    watches_[id] = {addr.addr(), size, type};
    return id;
}

void remote_process::remove_watchpoint(int id) {
    if (soft_watches_.erase(id) > 0) {
        return;
    }
    auto it = watches_.find(id);
    if (it == watches_.end()) {
        error::send(fmt::format("No watchpoint {}.", id));
    }
    remote_watch w = it->second;
    watches_.erase(it);
    if (alive_) {
        rsp().remove_watchpoint(pid_, w.z_type, w.addr, w.size);
    }
}

std::optional<int> remote_process::watch_of(const rsp::stop_reply& r, std::uint64_t& addr) const {
    for (const char* key : {"watch", "rwatch", "awatch"}) {
        auto f = r.fields.find(key);
        if (f == r.fields.end()) {
            continue;
        }
        addr = std::strtoull(f->second.c_str(), nullptr, 16);
        for (const auto& [id, w] : watches_) {
            if (addr >= w.addr && addr < w.addr + w.size) {
                return id;
            }
        }
    }
    return std::nullopt;
}

std::optional<int> remote_process::soft_watch_changed() {
    std::optional<int> first;
    for (auto& [id, w] : soft_watches_) {
        std::vector<std::byte> now(w.bytes.size());
        // Straight from the agent: the page cache would hold a page other threads write.
        if (rsp().read_memory(pid_, w.addr, now) != now.size() || now == w.bytes) {
            continue;
        }
        w.bytes = std::move(now);
        if (!first) {
            first = id;
        }
    }
    return first;
}

stop_reason remote_process::soft_watch_stop(int id, pid_t tid) {
    stop_reason why;
    why.kind = stop_kind::watchpoint;
    why.tid = tid;
    why.signo = SIGTRAP;
    why.watchpoint_id = id;
    why.watch_addr = virt_addr(soft_watches_.at(id).addr);
    soft_tid_ = tid;
    return why;
}

// The threads stepped over their breakpoints already (step_over_sites): a value such a
// step wrote is reported before the first step of the run.
void remote_process::soft_resume() {
    forget_after_resume();
    running_ = true;
    if (auto id = soft_watch_changed()) {
        soft_hit_ = soft_watch_stop(*id, soft_tid_);
        return;
    }
    soft_stepping_ = true;
    soft_step_sent_ = false;
}

// One step at a time: before each, a stepping thread that sits on an enabled breakpoint
// has hit it (it got there by the previous step, or was stopped there unreported); after
// each, a changed watched value is the stop. Any other stop (a signal, another thread's
// breakpoint, the end) ends the run as it would a continue.
std::optional<stop_reason> remote_process::soft_wait(int timeout_ms) {
    if (soft_hit_) {
        auto why = *soft_hit_;
        soft_hit_.reset();
        running_ = false;
        return why;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, soft_slice_ms));
    auto stop_here = [&](const rsp::stop_reply& r, bool asked) {
        soft_stepping_ = false;
        soft_step_sent_ = false;
        return take_stop(r, asked);
    };
    for (;;) {
        if (!soft_step_sent_) {
            rsp::stop_reply here;
            here.pid = pid_;
            if (stop_wanted_.exchange(false)) {
                here.tid = soft_tid_;
                return stop_here(here, true);   // signal 0, asked: interrupted
            }
            thread* t = find_thread(soft_tid_);
            std::uint64_t site = 0;
            try {
                site = t ? enabled_site_at_pc(*t) : 0;
            } catch (const error&) {
                t = nullptr;   // it exited during the last step
            }
            if (t == nullptr) {
                refresh_threads();
                auto all = threads();
                if (all.empty()) {
                    error::send(fmt::format("Process {} has no thread left to step.", pid_));
                }
                t = all.front();
                soft_tid_ = t->tid();
                site = enabled_site_at_pc(*t);
            }
            if (site != 0) {
                here.tid = t->tid();
                here.signo = SIGTRAP;
                return stop_here(here, false);
            }
            std::vector<rsp::resume_action> actions{{'s', pending_signal(soft_tid_), pid_, soft_tid_}};
            for (auto [tid, sig] : pending_signals_) {
                if (sig != 0 && tid != soft_tid_) {
                    actions.push_back({'c', sig, pid_, tid});
                }
            }
            actions.push_back({'c', 0, pid_, 0});
            pending_signals_.clear();
            forget_registers_and_memory();
            conn_->request_resume(pid_, std::move(actions));
            soft_step_sent_ = true;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (stop_wanted_.exchange(false)) {
            conn_->request_stop(pid_);
        }
        auto e = conn_->wait_for(pid_, static_cast<int>(std::max<long>(left.count(), 0)));
        if (!e) {
            return std::nullopt;   // the step has not ended yet (a thread blocked in a call)
        }
        soft_step_sent_ = false;
        for (auto [tid, signo] : e->other_signals) {
            pending_signals_[tid] = signo;
        }
        const auto& r = e->reply;
        bool event =
            r.fields.count("syscall_entry") > 0 || r.fields.count("syscall_return") > 0 || r.is_process_event();
        bool stepped = r.what == rsp::stop_reply::kind::stopped && (r.signo == SIGTRAP || r.signo == 0) && !event;
        if (std::uint64_t at = 0; stepped && r.signo == SIGTRAP && watch_of(r, at)) {
            return stop_here(r, false);   // a hardware watchpoint triggered during the step
        }
        if (stepped) {
            pid_t who = r.tid > 0 && r.signo == SIGTRAP ? r.tid : soft_tid_;
            if (auto id = soft_watch_changed()) {
                soft_stepping_ = false;
                running_ = false;
                forget_after_resume();
                return soft_watch_stop(*id, who);
            }
        }
        if (e->requested) {
            rsp::stop_reply asked = r;
            if (stepped) {
                asked.signo = 0;   // the step ended with the interrupt: it is the interrupt's stop
            }
            return stop_here(asked, true);
        }
        if (!stepped || (r.signo == SIGTRAP && r.tid > 0 && r.tid != soft_tid_)) {
            return stop_here(r, false);   // a signal, the end, another thread's breakpoint
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return std::nullopt;
        }
    }
}

}  // namespace ompdbg::tracer
