#pragma once
// Reading /proc/PID/... for a traced process: tasks, auxv, maps, comm, exe.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ompdbg::tracer::internal {

/// Thread ids of /proc/PID/task (empty when the process is gone).
std::vector<pid_t> list_tasks(pid_t pid);
/// The value of one auxv entry (AT_BASE, AT_PHDR, ...), nullopt when absent.
std::optional<std::uint64_t> auxv_value(pid_t pid, unsigned long type);
/// The contents of /proc/PID/task/TID/comm without the newline ("" when gone).
std::string thread_comm(pid_t pid, pid_t tid);
/// The state letter of /proc/PID/task/TID/stat ('R', 'S', 't', 'Z', ...); 0 when gone.
char thread_state_letter(pid_t pid, pid_t tid);
/// readlink /proc/PID/exe.
std::filesystem::path process_exe(pid_t pid);
/// The TracerPid of /proc/PID/status (0: none), nullopt when the process is gone.
std::optional<pid_t> tracer_pid(pid_t pid);

struct map_entry {
    std::uint64_t start, end, offset;
    std::string perms;
    std::string path;   ///< empty for anonymous mappings; "[vdso]", "[stack]", ...
};
std::vector<map_entry> read_maps(pid_t pid);

/// Reads a whole (small) file; empty when it cannot be read.
std::string read_small_file(const std::string& path);

}  // namespace ompdbg::tracer::internal
