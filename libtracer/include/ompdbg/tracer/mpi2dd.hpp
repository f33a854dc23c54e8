#pragma once
/// The MPI-2 debugger interface (MPI2DD) seen from the debugger: finding `MPI2DD_info` and
/// `MPI2DD_breakpoint` in a process, decoding the structure, its packed proctable, spawn
/// descriptors and (meta)directory tables from raw bytes (the layout of mpi2dd.h, never the
/// target's debug information), setting debugger flags, and the launch protocol: run a
/// starter until it reports MPI2DD_DEBUG_START. Every malformed input is one clear
/// ompdbg::error (bad magic, version, variant, sizes, pointers, unterminated strings).

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/base/addr.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/target.hpp"

#define MPI2DD_DEBUGGER_SIDE
#include "ompdbg/tracer/mpi2dd.h"

namespace ompdbg::tracer::mpi2dd {

/// "START", "SPAWN", ... for a debug_state value; "state N" for an unknown one.
std::string event_name(int debug_state);

/// Limits beyond which a table size is reported as implausible instead of read.
constexpr std::int32_t max_table_size = 65536;
/// Strings longer than this without a NUL are reported as unterminated.
constexpr std::size_t max_string = 4096;

struct spawn_desc {
    std::string parent_comm_world_id;
    int parent_rank = -1;
    int sequence = -1;
};

/// One MPI2DD_PROCDESC.
struct proc_desc {
    std::string host_name;
    std::string executable_name;
    std::string comm_world_id;
    pid_t pid = 0;
    int rank = -1;
    std::optional<spawn_desc> spawn;   ///< nullopt: the starter's own comm world
};

/// One MPI2DD_DIRECTORYENTRY.
struct directory_entry {
    std::string host_name;
    std::string executable_name;
    pid_t pid = 0;
};

/// A decoded MPI2DD_info (strings and tables read; null pointers give empty values).
struct info {
    int version = 0;
    int variant = 0;
    int debug_state = 0;
    std::uint32_t debugger_flags = 0;
    std::uint32_t mpi_flags = 0;
    std::string dll_name_32, dll_name_64;
    std::string meta_host_name, meta_executable_name;
    std::string abort_string;
    pid_t meta_pid = 0;
    std::vector<proc_desc> proctable;
    std::vector<directory_entry> directories;
    std::vector<directory_entry> metadirectories;

    bool is_starter() const { return mpi_flags & MPI2DD_MPIFLAG_I_AM_STARTER; }
    bool is_directory() const { return mpi_flags & MPI2DD_MPIFLAG_I_AM_DIR; }
    bool is_metadirectory() const { return mpi_flags & MPI2DD_MPIFLAG_I_AM_METADIR; }
};

/// "STARTER|DIR|IGNORE_QUEUE" for mpi_flags (doctor and `mpi2dd info`).
std::string describe_mpi_flags(std::uint32_t flags);

/// Where MPI2DD_info (and MPI2DD_breakpoint, if the process defines it) are in one process.
class interface {
public:
    /// Looks the symbols up in every loaded module of `t`; nullopt when `MPI2DD_info` is
    /// not defined (not an MPI2DD process, or its libraries are not loaded yet).
    static std::optional<interface> find(target& t);
    /// The interface with MPI2DD_info at a known address and no breakpoint: decodes a
    /// structure that no symbol lookup found, as the fuzz target does with a memory image.
    static interface at(virt_addr info);

    virt_addr info_address() const { return info_; }
    /// nullopt when the process has no MPI2DD_breakpoint (a rank that never raises events).
    std::optional<virt_addr> breakpoint_address() const { return breakpoint_; }

    /// Reads and checks the header only: throws when the magic, version or variant is not
    /// the one of this document ("MPI2DD_info of process N has a wrong magic ...").
    info read_header(target& t) const;
    /// read_header plus every string and table. Throws on a negative or implausible size,
    /// a pointer into unmapped memory, an unterminated string.
    info read(target& t) const;
    int debug_state(target& t) const;
    /// ORs `bits` into debugger_flags (MPI2DD_FLAG_...).
    void set_debugger_flags(target& t, std::uint32_t bits) const;

private:
    virt_addr info_;
    std::optional<virt_addr> breakpoint_;
};

/// MPI2DD as an executable file presents it before it runs.
struct file_interface {
    std::filesystem::path module;         ///< the program, or a library it names, defining MPI2DD_info
    bool has_breakpoint = false;          ///< MPI2DD_breakpoint is defined there too (or in another of them)
    std::uint32_t initial_mpi_flags = 0;  ///< as MPI2DD_info is initialised in that file (0 in .bss)
};

/// Looks for MPI2DD_info and MPI2DD_breakpoint in `program` and then in the libraries it
/// names (DT_NEEDED, found as the dynamic loader would: DT_RPATH, LD_LIBRARY_PATH,
/// DT_RUNPATH with $ORIGIN, then the default directories; not their own dependencies).
/// nullopt when none defines MPI2DD_info or `program` cannot be read. An MPI
/// implementation may fill mpi_flags at run time (then they are 0 here): only the START
/// event says for sure that a process is a starter. `elves`, when given, opens the files
/// (a session's cache, which the launch that follows reads the same files from).
std::optional<file_interface> find_in_file(const std::filesystem::path& program, const elf_provider& elves = {});

/// Runs a freshly launched starter until it calls MPI2DD_breakpoint with
/// debug_state == MPI2DD_DEBUG_START: sets MPI2DD_FLAG_BEING_DEBUGGED and
/// MPI2DD_FLAG_REQUEST_DIRECTORY_EVENTS as soon as MPI2DD_info and MPI2DD_breakpoint are
/// found (in the program at its exec, or in a library when it is loaded: before the
/// starter runs its own code), plants an internal breakpoint on MPI2DD_breakpoint. The
/// header and mpi_flags are read at START, since a starter may fill them at run time.
/// Returns the interface with the starter stopped there. Throws when the starter exits or
/// is killed first, has no MPI2DD_breakpoint once its libraries are loaded, has a bad
/// header or mpi_flags that do not make it a starter or directory at START, or aborts
/// before START ("... aborted the job: <abort_string>").
interface run_to_start(process& starter);

}  // namespace ompdbg::tracer::mpi2dd
