// A process on another host behind the `process` interface (remote_process.hpp), on the
// typed client of rsp_client.hpp: gdbserver plants the breakpoints (Z0) and steps over
// them itself, so a resume is one vCont and a stop one reply. Memory is cached by page
// while the process is stopped (every resume empties the cache), as for a local process.
#include "ompdbg/tracer/remote_process.hpp"

#include <elf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "internal/readonly_segments.hpp"
#include "internal/remote_registers.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/tracer/remote_files.hpp"

namespace ompdbg::tracer {

namespace {

constexpr std::uint64_t page_size = 4096;

std::atomic<bool> trust_readonly{true};

}  // namespace

void remote_process::set_trust_readonly_sections(bool on) { trust_readonly = on; }
bool remote_process::trusts_readonly_sections() { return trust_readonly; }

/// One thread of a remote process; registers read with `g` once per stop.
class remote_thread final : public thread {
public:
    remote_thread(remote_process& owner, pid_t tid, std::string name) : owner_(owner), tid_(tid), name_(std::move(name)) {}
    pid_t tid() const override { return tid_; }
    std::string name() const override { return name_; }
    thread_state state() const override { return owner_.running_ ? thread_state::running : thread_state::stopped; }
    const registers& regs() override {
        if (!cache_) {
            owner_.require_alive();
            raw_ = owner_.rsp().read_registers(owner_.pid_, tid_);
            cache_ = internal::registers_from_remote(owner_.rsp().registers(), raw_);
        }
        return *cache_;
    }
    void write_regs(const registers& r) override {
        regs();
        raw_ = internal::registers_to_remote(owner_.rsp().registers(), raw_, r);
        owner_.rsp().write_registers(owner_.pid_, tid_, raw_);
        cache_ = r;
    }
    void forget() { cache_.reset(); }
    void set_name(std::string n) { name_ = std::move(n); }

private:
    remote_process& owner_;
    pid_t tid_;
    std::string name_;
    std::optional<registers> cache_;
    std::string raw_;
};

remote_process::remote_process(std::shared_ptr<remote_connection> conn, pid_t pid, elf_provider elves)
    : conn_(std::move(conn)), pid_(pid), elves_(std::move(elves)),
      readonly_(std::make_unique<internal::readonly_segments>()) {
    conn_->add_member(pid_);
}

remote_process::~remote_process() {
    try {
        if (alive_) {
            detach();
        }
    } catch (...) {
        // A destructor never throws; the agent or its connection is gone.
    }
}

std::unique_ptr<remote_process> remote_process::attach(std::shared_ptr<remote_connection> conn, pid_t pid,
                                                       elf_provider elves) {
    if (!conn->is_extended()) {
        error::send("Don't know how to attach.  Try \"help target\".");
    }
    auto stop = conn->attach(pid);
    std::unique_ptr<remote_process> p(new remote_process(std::move(conn), pid, std::move(elves)));
    if (p->rsp().supported().xfer_exec_file) {
        p->exe_ = p->rsp().exec_file(pid);
    }
    p->take_stop(stop, true);
    p->pending_signals_.clear();   // the attach's SIGSTOP is ours, never the program's
    return p;
}

std::unique_ptr<remote_process> remote_process::launch(std::shared_ptr<remote_connection> conn,
                                                       const std::filesystem::path& program,
                                                       const std::vector<std::string>& args, elf_provider elves) {
    if (!conn->is_extended()) {
        error::send("The \"remote\" target does not support \"run\".  Try \"help target\" or \"continue\".");
    }
    std::vector<std::string> argv{program.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto stop = conn->run(argv);
    pid_t pid = stop.pid > 0 ? stop.pid : stop.tid;
    std::unique_ptr<remote_process> p(new remote_process(std::move(conn), pid, std::move(elves)));
    p->exe_ = program;
    p->take_stop(stop, true);
    p->pending_signals_.clear();   // the stop at the first instruction is the agent's
    return p;
}

std::unique_ptr<remote_process> remote_process::current(std::shared_ptr<remote_connection> conn, elf_provider elves) {
    auto p = held(std::move(conn), std::move(elves));
    if (!p) {
        error::send("The remote agent holds no process (start gdbserver with a program or --attach PID, or use "
                    "`target extended-remote`).");
    }
    return p;
}

std::unique_ptr<remote_process> remote_process::held(std::shared_ptr<remote_connection> conn, elf_provider elves) {
    auto stop = conn->client().query_stop();
    if (!stop || stop->what != rsp::stop_reply::kind::stopped) {
        return nullptr;
    }
    pid_t pid = stop->pid;
    if (pid <= 0) {
        pid = stop->tid;
    }
    std::unique_ptr<remote_process> p(new remote_process(std::move(conn), pid, std::move(elves)));
    if (p->rsp().supported().xfer_exec_file) {
        p->exe_ = p->rsp().exec_file(pid);
    }
    p->take_stop(*stop);
    p->pending_signals_.clear();
    return p;
}

void remote_process::require_alive() const {
    if (!alive_) {
        error::send("The program is not being run.");
    }
}

bool remote_process::disconnect() {
    conn_->forget(pid_);
    alive_ = false;
    threads_.clear();
    return true;
}

void remote_process::refresh_threads() {
    std::vector<std::unique_ptr<remote_thread>> now;
    for (auto& t : rsp().threads()) {
        if (t.pid != pid_ && t.pid != 0) {
            continue;
        }
        auto it = std::find_if(threads_.begin(), threads_.end(), [&](auto& old) { return old && old->tid() == t.tid; });
        if (it != threads_.end()) {
            (*it)->set_name(t.name);
            now.push_back(std::move(*it));
        } else {
            now.push_back(std::make_unique<remote_thread>(*this, t.tid, t.name));
        }
    }
    threads_ = std::move(now);
    threads_known_ = true;
}

std::vector<thread*> remote_process::threads() {
    if (!alive_) {
        return {};
    }
    if (!threads_known_) {
        refresh_threads();
    }
    std::vector<thread*> out;
    for (auto& t : threads_) {
        out.push_back(t.get());
    }
    return out;
}

thread* remote_process::find_thread(pid_t tid) {
    for (auto* t : threads()) {
        if (t->tid() == tid) {
            return t;
        }
    }
    return nullptr;
}

void remote_process::forget_after_resume() {
    forget_registers_and_memory();
    modules_.reset();
    readonly_->clear();
    threads_known_ = false;
}

void remote_process::forget_registers_and_memory() {
    ++resumes_;
    pages_.clear();
    for (auto& t : threads_) {
        t->forget();
    }
}

std::size_t remote_process::try_read_memory(virt_addr addr, std::span<std::byte> out) {
    if (!alive_ || running_) {
        return 0;
    }
    std::size_t done = 0;
    while (done < out.size()) {
        std::uint64_t a = addr.addr() + done;
        if (std::size_t n = trust_readonly ? readonly_->read(a, out.subspan(done)) : 0) {
            done += n;
            continue;
        }
        std::uint64_t page = a & ~(page_size - 1);
        auto it = pages_.find(page);
        if (it == pages_.end()) {
            std::vector<std::byte> buf(page_size);
            if (rsp().read_memory(pid_, page, buf) != page_size) {
                // A page only partly readable: no cache, just the bytes asked for.
                return done + rsp().read_memory(pid_, a, out.subspan(done));
            }
            it = pages_.emplace(page, std::move(buf)).first;
        }
        std::size_t n = std::min<std::size_t>(page_size - (a - page), out.size() - done);
        std::memcpy(out.data() + done, it->second.data() + (a - page), n);
        done += n;
    }
    return done;
}

void remote_process::read_memory(virt_addr addr, std::span<std::byte> out) {
    if (try_read_memory(addr, out) != out.size()) {
        error::send(fmt::format("Cannot access memory at address {:#x}", addr.addr()));
    }
}

void remote_process::write_memory(virt_addr addr, std::span<const std::byte> data) {
    require_alive();
    readonly_->note_write(addr.addr(), data.size());
    rsp().write_memory(pid_, addr.addr(), data);
    for (std::uint64_t p = addr.addr() & ~(page_size - 1); p < addr.addr() + data.size(); p += page_size) {
        pages_.erase(p);
    }
}

stop_reason remote_process::take_stop(const rsp::stop_reply& r, bool asked) {
    running_ = false;
    forget_after_resume();
    stop_reason why;
    why.tid = r.tid > 0 ? r.tid : pid_;
    if (r.what == rsp::stop_reply::kind::exited) {
        why.kind = stop_kind::exited;
        why.exit_code = r.exit_code;
    } else if (r.what == rsp::stop_reply::kind::terminated) {
        why.kind = stop_kind::terminated;
        why.signo = r.signo;
    }
    if (why.is_process_end()) {
        restore_vfork_parent_memory();
        alive_ = false;
        end_ = why;
        threads_.clear();
        conn_->forget(pid_);
        return why;
    }
    why.signo = r.signo;
    soft_tid_ = why.tid;
    if (auto event = process_event(r, why, asked)) {
        return *event;
    }
    for (auto [key, kind] : {std::pair{"syscall_entry", stop_kind::syscall_entry},
                             std::pair{"syscall_return", stop_kind::syscall_exit}}) {
        if (auto f = r.fields.find(key); f != r.fields.end() && r.signo == SIGTRAP) {
            why.kind = kind;
            why.syscall_number = static_cast<int>(std::strtol(f->second.c_str(), nullptr, 16));
            return why;
        }
    }
    if (std::uint64_t addr = 0; r.signo == SIGTRAP && !watches_.empty()) {
        if (auto id = watch_of(r, addr)) {
            why.kind = stop_kind::watchpoint;
            why.watchpoint_id = *id;
            why.watch_addr = virt_addr(addr);
            return why;
        }
    }
    if (r.signo == SIGTRAP) {
        auto* t = find_thread(why.tid);
        std::uint64_t pc = t ? t->regs().pc() : 0;
        reported_pcs_[why.tid] = pc;
        auto site = sites_.find(pc);
        if (site != sites_.end() && site->second->is_enabled()) {
            why.kind = stop_kind::breakpoint;
            why.breakpoint_addr = virt_addr(pc);
            return why;
        }
    }
    if (asked && (r.signo == SIGINT || r.signo == SIGSTOP || r.signo == 0)) {
        why.kind = stop_kind::interrupted;
        return why;
    }
    why.kind = stop_kind::signal;
    if (r.signo != SIGTRAP && r.signo != 0) {
        pending_signals_[why.tid] = r.signo;   // delivered on resume unless cleared
    }
    return why;
}

std::uint64_t remote_process::enabled_site_at_pc(thread& t) {
    std::uint64_t pc = t.regs().pc();
    auto it = sites_.find(pc);
    return it != sites_.end() && it->second->is_enabled() ? pc : 0;
}

// gdbserver does not step a thread over a Z0 breakpoint at its pc: resumed there, the
// thread reports the same hit again. As gdb does, a thread whose stop was reported at a
// breakpoint steps alone with the breakpoint out (`vCont;s`), before the vCont that
// resumes the process. A thread that sits on a breakpoint without having reported it (it
// was stopped there with another thread's stop) runs into it and reports its hit.
std::optional<rsp::stop_reply> remote_process::step_over_sites() {
    auto reported = std::exchange(reported_pcs_, {});
    if (vfork_lifted_) {
        return std::nullopt;   // our breakpoints are out of the memory until vforkdone
    }
    for (auto* t : threads()) {
        std::uint64_t pc = enabled_site_at_pc(*t);
        auto was = reported.find(t->tid());
        if (pc == 0 || was == reported.end() || was->second != pc) {
            continue;
        }
        int sig = pending_signal(t->tid());
        pending_signals_.erase(t->tid());
        rsp().remove_breakpoint(pid_, pc);
        conn_->request_resume(pid_, {{'s', sig, pid_, t->tid()}});
        static_cast<remote_thread*>(t)->forget();
        std::optional<remote_connection::event> e;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(rsp().io().timeout_ms());
        try {
            while (!e && std::chrono::steady_clock::now() < deadline) {
                e = conn_->wait_for(pid_, 100);
            }
        } catch (const error&) {
            alive_ = false;
            throw;
        }
        if (!e) {
            error::send(fmt::format("Thread {} of process {} did not step over the breakpoint at {:#x}.", t->tid(), pid_, pc));
        }
        for (auto [tid, signo] : e->other_signals) {
            pending_signals_[tid] = signo;
        }
        if (e->reply.what == rsp::stop_reply::kind::stopped) {
            rsp().insert_breakpoint(pid_, pc);
        }
        std::uint64_t watched = 0;
        if (e->reply.what != rsp::stop_reply::kind::stopped || e->reply.signo != SIGTRAP ||
            e->reply.is_process_event() || watch_of(e->reply, watched)) {
            // A signal or the end came during the step, the instruction forked or exec'ed,
            // or it wrote a watched value (a debug register triggered): the next stop. A
            // signal that stopped the thread before the instruction ran (the SIGCHLD of a
            // fork child that exited meanwhile) leaves it on the site: it steps over it
            // again when resumed, or it would hit the breakpoint it stopped at.
            if (e->reply.what == rsp::stop_reply::kind::stopped && e->reply.signo != SIGTRAP &&
                !e->reply.is_process_event()) {
                reported_pcs_[t->tid()] = pc;
            }
            return e->reply;
        }
    }
    return std::nullopt;
}

void remote_process::resume() {
    require_alive();
    stop_wanted_ = false;
    try {
        resume_now();
    } catch (const error&) {
        if (!conn_->is_lost()) {
            throw;
        }
        // The agent is gone: the next wait reports the process lost, as for an agent that
        // dies while it runs, so that the other processes of a job go on.
        running_ = true;
    }
}

void remote_process::resume_now() {
    release_children();
    if (auto early = step_over_sites()) {
        early_stop_ = early;
        running_ = true;
        return;
    }
    if (!soft_watches_.empty()) {
        soft_resume();
        return;
    }
    std::vector<rsp::resume_action> actions;
    for (auto [tid, sig] : pending_signals_) {
        if (sig != 0) {
            actions.push_back({'c', sig, pid_, tid});
        }
    }
    actions.push_back({'c', 0, pid_, 0});
    pending_signals_.clear();
    forget_after_resume();
    conn_->request_resume(pid_, std::move(actions));
    running_ = true;
}

stop_reason remote_process::step_instruction(pid_t tid) {
    require_alive();
    stop_wanted_ = false;
    reported_pcs_.erase(tid);
    release_children();
    auto* t = find_thread(tid);
    std::uint64_t over = t && !vfork_lifted_ ? enabled_site_at_pc(*t) : 0;
    if (over) {
        rsp().remove_breakpoint(pid_, over);   // else the step reports the breakpoint again
    }
    int sig = pending_signal(tid);
    pending_signals_.erase(tid);
    forget_after_resume();
    conn_->request_resume(pid_, {{'s', sig, pid_, tid}});
    running_ = true;
    stepping_tid_ = tid;
    stop_reason why;
    try {
        why = wait_for_stop();
    } catch (...) {
        stepping_tid_ = 0;
        throw;
    }
    stepping_tid_ = 0;
    if (over && alive_ && !vfork_lifted_ && why.kind != stop_kind::exec) {
        rsp().insert_breakpoint(pid_, over);
    }
    if (why.kind == stop_kind::signal && why.signo == SIGTRAP) {
        why.kind = stop_kind::single_step;
        if (auto id = soft_watch_changed()) {
            return soft_watch_stop(*id, tid);   // the instruction wrote a watched value
        }
    }
    return why;
}

// A stop that is not the debugger's to see (a fork not reported, the end of a vfork) runs
// the process on as it ran, and the wait goes on.
std::optional<stop_reason> remote_process::wait_for_stop(int timeout_ms) {
    for (;;) {
        auto why = wait_once(timeout_ms);
        if (!why || !std::exchange(restart_, false)) {
            return why;
        }
        restart();
    }
}

std::optional<stop_reason> remote_process::wait_once(int timeout_ms) {
    if (!running_) {
        error::send("The program is not running.");
    }
    if (early_stop_) {
        auto r = *early_stop_;
        early_stop_.reset();
        return take_stop(r);
    }
    try {
        if (soft_stepping_ || soft_hit_) {
            return soft_wait(timeout_ms);
        }
        if (stop_wanted_.exchange(false)) {
            conn_->request_stop(pid_);
        }
        auto e = conn_->wait_for(pid_, timeout_ms);
        if (!e) {
            return std::nullopt;
        }
        for (auto [tid, signo] : e->other_signals) {
            pending_signals_[tid] = signo;
        }
        return take_stop(e->reply, e->requested);
    } catch (const error&) {
        // The agent or its connection is gone: the process is lost to us.
        alive_ = false;
        running_ = false;
        throw;
    }
}

stop_reason remote_process::wait_for_stop() {
    for (;;) {
        // Short slices: an interrupt() from a signal handler is sent by the next one.
        if (auto why = wait_for_stop(50)) {
            return *why;
        }
    }
}

void remote_process::interrupt() {
    stop_wanted_ = true;
}

// gdbserver's QCatchSyscalls: the agent stops the process at the calls it names (sent
// only when the set changes: every resume sets it).
void remote_process::set_syscall_catch(std::optional<std::vector<int>> numbers) {
    if (numbers == syscall_catch_) {
        return;
    }
    if (numbers && !rsp().supported().catch_syscalls) {
        error::send(fmt::format("catch syscall needs the remote agent's QCatchSyscalls, which the agent of host {} "
                                "does not support.",
                                conn_->host()));
    }
    rsp().catch_syscalls(pid_, numbers);
    syscall_catch_ = std::move(numbers);
}

void remote_process::set_pending_signal(pid_t tid, int signo) {
    if (signo == 0) {
        pending_signals_.erase(tid);
    } else {
        pending_signals_[tid] = signo;
    }
}

int remote_process::pending_signal(pid_t tid) const {
    auto it = pending_signals_.find(tid);
    return it == pending_signals_.end() ? 0 : it->second;
}

breakpoint_site& remote_process::add_breakpoint_site(virt_addr addr, bool internal) {
    require_alive();
    auto it = sites_.find(addr.addr());
    if (it != sites_.end()) {
        ++it->second->refcount_;
        if (!it->second->enabled_) {
            enable_site(addr);
        }
        return *it->second;
    }
    std::unique_ptr<breakpoint_site> s(new breakpoint_site(next_site_id_++, addr, internal));
    std::byte saved{};
    if (try_read_memory(addr, std::span(&saved, 1)) != 1) {
        error::send(fmt::format("Cannot access memory at address {:#x}", addr.addr()));
    }
    if (!vfork_lifted_) {
        rsp().insert_breakpoint(pid_, addr.addr());   // else at vforkdone
    }
    s->saved_ = saved;
    s->enabled_ = true;
    s->refcount_ = 1;
    return *sites_.emplace(addr.addr(), std::move(s)).first->second;
}

void remote_process::remove_breakpoint_site(virt_addr addr) {
    auto it = sites_.find(addr.addr());
    if (it == sites_.end() || --it->second->refcount_ > 0) {
        return;
    }
    if (it->second->enabled_ && alive_ && !vfork_lifted_) {
        rsp().remove_breakpoint(pid_, addr.addr());
    }
    sites_.erase(it);
}

breakpoint_site* remote_process::find_breakpoint_site(virt_addr addr) {
    auto it = sites_.find(addr.addr());
    return it == sites_.end() ? nullptr : it->second.get();
}

void remote_process::enable_site(virt_addr addr) {
    auto* s = find_breakpoint_site(addr);
    if (s && !s->enabled_) {
        if (!vfork_lifted_) {
            rsp().insert_breakpoint(pid_, addr.addr());
        }
        s->enabled_ = true;
    }
}

void remote_process::disable_site(virt_addr addr) {
    auto* s = find_breakpoint_site(addr);
    if (s && s->enabled_) {
        if (!vfork_lifted_) {
            rsp().remove_breakpoint(pid_, addr.addr());
        }
        s->enabled_ = false;
    }
}

void remote_process::detach() {
    require_alive();
    if (running_) {
        interrupt();
        wait_for_stop();
    }
    release_children();
    for (auto& [addr, s] : sites_) {
        if (s->enabled_ && !vfork_lifted_) {
            rsp().remove_breakpoint(pid_, addr);
        }
        s->enabled_ = false;
    }
    for (const auto& [id, w] : watches_) {
        rsp().remove_watchpoint(pid_, w.z_type, w.addr, w.size);
    }
    watches_.clear();
    soft_watches_.clear();
    rsp().detach(pid_);
    conn_->forget(pid_);
    alive_ = false;
    threads_.clear();
}

void remote_process::kill() {
    require_alive();
    release_children();
    rsp().kill(pid_);
    conn_->forget(pid_);
    alive_ = false;
    threads_.clear();
    stop_reason why;
    why.kind = stop_kind::terminated;
    why.signo = SIGKILL;
    end_ = why;
}

}  // namespace ompdbg::tracer
