#pragma once
/// Reading /proc/PID/...: tasks, auxv, maps, comm, exe, status fields. What the tracer
/// itself uses, public so that apps (`ompdbg doctor`, `ompdbg triage`) read /proc the same
/// way. Every function answers "nothing" (empty, nullopt, 0) for a process that is gone or
/// cannot be read; none throws.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ompdbg::tracer::proc_fs {

/// Reads a whole (small) file; empty when it cannot be read.
std::string read_small_file(const std::string& path);
/// Thread ids of /proc/PID/task (empty when the process is gone).
std::vector<pid_t> list_tasks(pid_t pid);
/// The value of one auxv entry (AT_BASE, AT_PHDR, ...), nullopt when absent.
std::optional<std::uint64_t> auxv_value(pid_t pid, unsigned long type);
/// Every auxv entry (type, value) before AT_NULL, read at once (empty when gone).
using auxv_entries = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
auxv_entries read_auxv(pid_t pid);
/// The value of one entry of an auxv read before, nullopt when absent.
std::optional<std::uint64_t> auxv_value(const auxv_entries& auxv, unsigned long type);
/// The contents of /proc/PID/task/TID/comm without the newline ("" when gone).
std::string thread_comm(pid_t pid, pid_t tid);
/// The state letter of /proc/PID/task/TID/stat ('R', 'S', 't', 'Z', ...); 0 when gone.
char thread_state_letter(pid_t pid, pid_t tid);
/// What /proc/PID/task/TID/stat says of a thread: its state letter (0 when gone) and its
/// CPU time, utime + stime in clock ticks (nullopt when gone or unreadable).
struct thread_stat {
    char state = 0;
    std::optional<long> cpu_ticks;
};
thread_stat read_thread_stat(pid_t pid, pid_t tid);
/// readlink /proc/PID/exe (empty when it cannot be read).
std::filesystem::path process_exe(pid_t pid);
/// The TracerPid of /proc/PID/status (0: none), nullopt when the process is gone.
std::optional<pid_t> tracer_pid(pid_t pid);
/// The value of "KEY:" in /proc/PID/status (tid 0) or /proc/PID/task/TID/status, without
/// the surrounding blanks ("0\t0\t0\t0" for Uid); nullopt when absent or gone.
std::optional<std::string> status_field(pid_t pid, pid_t tid, std::string_view key);
/// Whether signal `signo` is queued and not yet taken for the process (ShdPnd of
/// /proc/PID/status) or for its thread `tid` (SigPnd of /proc/PID/task/TID/status).
bool signal_queued(pid_t pid, pid_t tid, int signo);

/// One line of /proc/PID/maps.
struct map_entry {
    std::uint64_t start, end, offset;
    std::string perms;
    std::string path;   ///< empty for anonymous mappings; "[vdso]", "[stack]", ...
};
std::vector<map_entry> read_maps(pid_t pid);

}  // namespace ompdbg::tracer::proc_fs
