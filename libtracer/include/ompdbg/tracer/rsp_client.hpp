#pragma once
/// gdb's Remote Serial Protocol, the typed client (LLDB's GDBRemoteCommunicationClient):
/// the packets ompdbg sends to a gdbserver agent and their replies as values. Features are
/// negotiated once, at connect (qSupported, QStartNoAckMode), and kept as flags that every
/// later choice reads; nothing is retried to discover support. Thread ids are pid.tid with
/// the multiprocess extensions. Throws `ompdbg::error` for an `Exx` reply, a reply of the
/// wrong shape, a timeout or a closed connection.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/tracer/rsp_packets.hpp"

namespace ompdbg::tracer::rsp {

/// What the agent said it supports in its qSupported reply.
struct features {
    std::size_t packet_size = 400;   ///< PacketSize: the largest packet it accepts
    bool multiprocess = false;
    bool no_ack_mode = false;        ///< QStartNoAckMode+ (and then accepted)
    bool xfer_features = false;      ///< qXfer:features:read (target description)
    bool xfer_threads = false;
    bool xfer_libraries_svr4 = false;
    bool xfer_auxv = false;
    bool xfer_exec_file = false;
    bool binary_upload = false;      ///< `x` (binary memory reads)
    bool swbreak = false;            ///< stop replies say swbreak: at a software breakpoint
    bool vcont = false;              ///< vContSupported+
    bool non_stop = false;           ///< QNonStop+ (each thread stops and runs on its own)
    bool catch_syscalls = false;     ///< QCatchSyscalls+ (stops at system calls: catch syscall)
    bool fork_events = false;        ///< fork-events+ (stops at fork with `fork:pC.C`)
    bool vfork_events = false;       ///< vfork-events+ (`vfork:pC.C`, then `vforkdone:`)
    bool exec_events = false;        ///< exec-events+ (`exec:HEXPATH`)
};

/// A stop reply (T, S, W, X), with gdb's signal numbers translated to this host's.
struct stop_reply {
    enum class kind { stopped, exited, terminated };
    kind what = kind::stopped;
    int signo = 0;                   ///< stopped / terminated: host signal number
    int exit_code = 0;               ///< exited
    pid_t pid = 0;                   ///< 0 when the reply names none
    pid_t tid = 0;
    bool swbreak = false;
    /// Every other `name:value;` pair of a T reply (e.g. "library", "watch", register numbers).
    std::map<std::string, std::string> fields;

    /// A stop at a fork, vfork, the end of a vfork or an exec (the fork/exec events asked
    /// for in qSupported): never a thread's breakpoint or step, whatever its signal.
    bool is_process_event() const;
};

/// A thread of qXfer:threads:read.
struct thread_entry {
    pid_t pid = 0, tid = 0;
    std::string name;
};

/// A library of qXfer:libraries-svr4:read.
struct library_entry {
    std::string name;
    std::uint64_t lm = 0, l_addr = 0, l_ld = 0;
};

/// One register of the target description, at its offset in the `g` packet.
struct register_desc {
    std::string name;
    int regnum = 0;
    std::size_t offset = 0, size = 0;
};

/// One resume action of vCont: `c`/`s` with a host signal (0: none) for a thread (tid 0:
/// every thread of `pid`).
struct resume_action {
    char op = 'c';
    int signo = 0;
    pid_t pid = 0, tid = 0;
};

/// gdb's signal numbers (the protocol's) from and to this host's.
int signal_from_gdb(int gdb_signo);
int signal_to_gdb(int host_signo);
/// Parses "T05thread:p1f.1f;swbreak:;..." / "S05" / "W00;process:1f" / "X09".
stop_reply parse_stop_reply(std::string_view packet);
/// Parses a thread id "p1f.20", "1f" (hex; -1 for "all").
std::pair<pid_t, pid_t> parse_thread_id(std::string_view id);

class client {
public:
    /// Negotiates features over `io` (qSupported, QStartNoAckMode). `extended`: asks for
    /// extended-remote mode (`!`) so that the agent stays after a detach.
    client(std::unique_ptr<packet_io> io, bool extended);

    const features& supported() const { return features_; }
    bool is_extended() const { return extended_; }
    packet_io& io() { return *io_; }

    /// QNonStop:1: from now on vCont answers OK, and every stop comes as a `%Stop`
    /// notification (next_notification) followed by `vStopped` (next_stopped). Throws when
    /// the agent lacks or refuses non-stop mode.
    void set_non_stop();
    bool is_non_stop() const { return non_stop_; }

    /// vAttach;PID → the first stop (all-stop), or nullopt in non-stop mode (the process's
    /// threads then run until stopped with stop()).
    std::optional<stop_reply> attach(pid_t pid);
    /// vRun: the agent starts `argv` (argv[0] the program's path on its host), stopped at its
    /// first instruction; the reply is that stop (also in non-stop mode). Throws naming the
    /// program when the agent cannot.
    stop_reply run(const std::vector<std::string>& argv);
    /// Whether the agent's host has process `pid` (vFile:open of /proc/PID/stat); nullopt
    /// when the agent has no vFile.
    std::optional<bool> process_exists(pid_t pid);
    /// `?`: why the target is stopped now (target remote). In non-stop mode the stops of
    /// the other threads that follow (vStopped) are read and dropped: they are stopped too.
    std::optional<stop_reply> query_stop();
    /// D;PID (D without the multiprocess extensions).
    void detach(pid_t pid);
    /// vKill;PID (k without the multiprocess extensions).
    void kill(pid_t pid);

    /// Every register of thread pid.tid (g), raw in the target description's layout.
    std::string read_registers(pid_t pid, pid_t tid);
    void write_registers(pid_t pid, pid_t tid, std::string_view raw);
    /// The target description's registers (qXfer:features:read of target.xml and its
    /// includes), read once.
    const std::vector<register_desc>& registers();

    /// Reads up to out.size() bytes at `addr` in large packets (x or m); returns how many
    /// were readable from the start.
    std::size_t read_memory(pid_t pid, std::uint64_t addr, std::span<std::byte> out);
    /// Small reads of many places at once (each at most one packet), pipelined: the bytes
    /// of each range that were readable from its start, in order.
    std::vector<std::vector<std::byte>> read_memory_ranges(pid_t pid,
                                                           const std::vector<std::pair<std::uint64_t, std::size_t>>& ranges);
    /// M; throws "Cannot access memory at address 0x..".
    void write_memory(pid_t pid, std::uint64_t addr, std::span<const std::byte> data);

    /// Z0/z0 (x86: kind 1); throws when the agent refuses.
    void insert_breakpoint(pid_t pid, std::uint64_t addr);
    void remove_breakpoint(pid_t pid, std::uint64_t addr);
    /// Z2/Z3/Z4 (`type` 2 write, 3 read, 4 access) over `len` bytes: the agent's debug
    /// registers. Returns the agent's answer: "OK", "" (not supported) or "E.." (refused,
    /// e.g. no free debug register).
    std::string insert_watchpoint(pid_t pid, int type, std::uint64_t addr, std::size_t len);
    /// z2/z3/z4; throws when the agent refuses.
    void remove_watchpoint(pid_t pid, int type, std::uint64_t addr, std::size_t len);

    /// vCont with the actions. All-stop: the reply comes through wait_stop. Non-stop: the
    /// agent's OK is read here (throws on an error reply).
    void resume(const std::vector<resume_action>& actions);
    /// All-stop: the next stop reply within `timeout_ms` (O console packets are skipped),
    /// or nullopt.
    std::optional<stop_reply> wait_stop(int timeout_ms);
    /// Non-stop: `vCont;t:pPID.-1`, asks every thread of `pid` to stop (each reports a stop,
    /// signal 0, unless it had stopped already).
    void stop(pid_t pid);
    /// Non-stop: the next `%Stop` notification within `timeout_ms`, or nullopt. After one,
    /// call next_stopped() until it returns nullopt (the agent sends no other notification
    /// until then).
    std::optional<stop_reply> next_notification(int timeout_ms);
    /// Non-stop: vStopped, the next queued stop, nullopt when the queue is empty (OK).
    std::optional<stop_reply> next_stopped();

    /// qXfer:OBJECT:read:ANNEX, every chunk, unescaped.
    std::string xfer(std::string_view object, std::string_view annex);
    std::vector<thread_entry> threads();
    /// The library list and the main executable's link_map (main-lm).
    std::vector<library_entry> libraries(pid_t pid, std::uint64_t* main_lm = nullptr);
    std::string auxv(pid_t pid);
    std::string exec_file(pid_t pid);
    /// QCatchSyscalls for `pid`: nullopt stops at none, an empty list at every system call,
    /// else at those numbers (stop replies then carry syscall_entry/syscall_return). Throws
    /// when the agent refuses.
    void catch_syscalls(pid_t pid, const std::optional<std::vector<int>>& numbers);
    /// qRcmd: the agent's output for a monitor command.
    std::string monitor(std::string_view command);

    /// vFile:setfs:PID: later vFile: operations resolve paths in the mount namespace of
    /// process `pid` of the agent's host (0: the agent's own), as gdb does. Returns false when
    /// the agent lacks it (its own namespace is used then); the first reply says so, and is
    /// kept. Sent only when `pid` differs from the last one.
    bool file_set_namespace(pid_t pid);
    /// vFile:open of `path` read-only: the agent's descriptor for it. Throws "PATH on the
    /// remote host: No such file or directory" (the host's errno, from the `F-1,errno`
    /// reply), or "Remote agent does not support vFile:open." for an empty reply.
    int file_open(std::string_view path);
    /// vFile:pread: the bytes at `offset`, at most `count` and at most one packet's worth
    /// (file_chunk()); fewer at the end of the file, none past it. Throws as file_open.
    std::string file_pread(int fd, std::size_t count, std::uint64_t offset);
    /// vFile:close. Throws as file_open.
    void file_close(int fd);
    /// How many bytes one vFile:pread asks for: the agent's PacketSize less the reply's
    /// `F<count>;` and framing.
    std::size_t file_chunk() const;

private:
    /// Hg (select the thread later g/G/m/M act on), sent only when it changes.
    void select_thread(pid_t pid, pid_t tid);
    /// Selects a thread of `pid` unless one is selected already.
    void select_process(pid_t pid);
    std::string thread_id(pid_t pid, pid_t tid) const;
    /// An OK reply, else throws "what: Exx".
    void expect_ok(std::string_view packet, std::string_view what);

    std::unique_ptr<packet_io> io_;
    bool extended_;
    bool non_stop_ = false;
    features features_;
    std::optional<std::pair<pid_t, pid_t>> selected_;
    std::optional<std::vector<register_desc>> registers_;
    std::optional<bool> setfs_;   ///< whether vFile:setfs is supported (unknown until first sent)
    pid_t fs_pid_ = 0;            ///< the namespace vFile:setfs selected last
};

}  // namespace ompdbg::tracer::rsp
