#pragma once
/// The command line's observer of the model: renders the model's events as gdb does.

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "output.hpp"
#include "ompdbg/debugger/session/session_observer.hpp"

namespace ompdbg::app {

/// Prints the model's events on the session's output, in gdb's words.
class cli_observer final : public debugger::session_observer {
public:
    /// `batch`: gdb's -batch leaves out "Reading symbols from ...".
    cli_observer(output& out, bool batch) : out_(out), batch_(batch) {}

    void symbols_read(const std::filesystem::path& program, bool has_debug_info) override;
    void warning(std::string_view text) override;
    void expression_warning(std::string_view text) override;
    void remote_file_fetch(const std::string& host, const std::filesystem::path& host_path) override;
    void agent_unused(std::string_view why) override;
    void agent_loaded(const std::filesystem::path& agent, pid_t pid) override;
    void error(std::string_view text) override;
    void target_lines(std::string_view text) override;
    void thread_created(pid_t tid, int number, const std::string& target_id) override;
    void thread_exited(pid_t tid, const std::string& target_id) override;
    void signal_passed(pid_t tid, int number, int signo) override;
    void process_exec(pid_t pid, const std::filesystem::path& program) override;
    void fork_child_released(pid_t child, bool vfork) override;
    void fork_followed(pid_t parent, const std::string& parent_thread, pid_t child, bool vfork) override;
    void inferior_added(int number, pid_t pid) override;
    void fork_parent_detached(pid_t pid) override;
    void watchpoint_dropped(int number, std::string_view error) override;
    void vfork_parent_detached(pid_t pid, std::string_view how) override;
    void inferior_detached(int number, pid_t pid) override;
    void ompd_loaded(const debugger::ompd_library_loaded& lib) override;
    void ompd_unavailable(std::string_view problem) override;
    void job_error(std::string_view text) override;
    void job_aborted(const std::string& message, std::size_t stopped_ranks, const std::string& starter) override;
    void rank_turn(const debugger::inferior& rank, bool labelled) override;
    void rank_turn_ended(const debugger::inferior& rank) override;
    void rank_steps_ended() override;
    void rank_stop(const debugger::inferior& rank) override;
    void rank_stop_ended(const debugger::inferior& rank) override;
    void rank_error(const debugger::inferior& rank, std::string_view text) override;
    void job_warning(std::string_view text) override;
    void job_tasks_waiting(const debugger::pending_tasks& p) override;
    void job_starter_launched(pid_t pid) override;
    void job_interface_chosen(const std::string& starter) override;
    void job_acquired(const debugger::acquired_job& j) override;
    void job_tables_changed(const debugger::mpi2dd_tables_changed& e) override;
    void job_ended(std::size_t ranks, bool killed) override;
    void rank_ended(const debugger::inferior& rank, const tracer::stop_reason& why) override;
    void starter_ended(const std::string& starter, const tracer::stop_reason& why) override;

private:
    output& out_;
    bool batch_;
    /// The rank whose "[rank N]" label was printed last while ranks step together.
    const debugger::inferior* labelled_ = nullptr;
};

}  // namespace ompdbg::app
