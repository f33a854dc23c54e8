#pragma once
// The live process libtracer drives with ptrace on this host: the implementation of
// `process` behind process::launch, process::attach and adopt_fork_child. Its
// state (`impl`) is process_impl.hpp, shared by the files that implement it.

#include <memory>

#include "ompdbg/tracer/process.hpp"

namespace ompdbg::tracer {

class ptrace_process final : public process {
public:
    ptrace_process();
    ~ptrace_process() override;
    pid_t pid() const override;
    std::filesystem::path executable() const override;
    void forget_cached_memory() override;
    std::uint64_t resume_count() const override;
    void read_memory(virt_addr addr, std::span<std::byte> out) override;
    std::size_t try_read_memory(virt_addr addr, std::span<std::byte> out) override;
    void write_memory(virt_addr addr, std::span<const std::byte> data) override;
    std::vector<thread*> threads() override;
    thread* find_thread(pid_t tid) override;
    const std::vector<loaded_module>& modules() override;
    bool is_attached() const override;
    bool is_alive() const override;
    bool was_job_control_stopped() const override;
    void end_job_control_stop() override;
    void resume() override;
    stop_reason step_instruction(pid_t tid) override;
    void hold_threads(std::vector<pid_t> tids) override;
    std::optional<std::uint64_t> step_over_pc(pid_t tid) const override;
    void set_step_over_pc(pid_t tid, std::optional<std::uint64_t> pc) override;
    stop_reason wait_for_stop() override;
    std::optional<stop_reason> wait_for_stop(int timeout_ms) override;
    void set_early_breakpoint_reports(bool on) override;
    void set_resume_creators_early(bool on) override;
    void stop_others() override;
    bool others_running() const override;
    void interrupt() override;
    void set_report_forks(bool on) override;
    void set_keep_fork_children(bool on, bool vfork_too) override;
    std::unique_ptr<process> adopt_fork_child(pid_t child, bool vforked) override;
    void release_fork_child(pid_t child) override;
    void finish_vfork() override;
    void set_syscall_catch(std::optional<std::vector<int>> numbers) override;
    std::optional<siginfo_t> last_siginfo(pid_t tid) const override;
    std::optional<siginfo_t> stop_siginfo(pid_t tid) const override;
    void set_pending_signal(pid_t tid, int signo) override;
    int pending_signal(pid_t tid) const override;
    breakpoint_site& add_breakpoint_site(virt_addr addr, bool internal) override;
    void remove_breakpoint_site(virt_addr addr) override;
    breakpoint_site* find_breakpoint_site(virt_addr addr) override;
    void enable_site(virt_addr addr) override;
    void disable_site(virt_addr addr) override;
    std::optional<std::string> make_site_fast(virt_addr addr, const fast_site_request& req) override;
    void make_site_slow(virt_addr addr) override;
    bool is_site_fast(virt_addr addr) const override;
    int add_watchpoint(virt_addr addr, std::size_t size, watch_kind kind, watch_mode mode) override;
    void remove_watchpoint(int id) override;
    int hardware_watchpoints_in_use() const override;
    process::step_over_counts step_overs() const override;
    void detach() override;
    void kill() override;
    std::string connection() const override { return "native"; }

private:
    friend class process;          // launch/attach fill impl_
    friend class thread_record;
    friend class process_group;   // polls members without draining the shared wake-up pipe
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace ompdbg::tracer
