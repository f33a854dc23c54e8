#pragma once
/// The MPI message-queue host: finds the message-queue DLL an MPI library names
/// (`mpimsgq_dll_locations`, then `MPIR_dll_name`), loads it under the plugin policy, hands
/// it our basic, image and process callback tables (memory, symbols, type sizes and field
/// offsets from DWARF, target-to-host, image and process info on libtracer + libdwarfview)
/// and offers its queries as C++: per communicator, the pending sends, pending receives and
/// unexpected messages of one MPI process.
///
/// Ownership: an `msgq_library` is shared (std::shared_ptr) by the `msgq_process`es that
/// use it; a `msgq_process` must not outlive its target.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::plugins {

namespace internal {
struct msgq_api;
struct msgq_image_ctx;
struct msgq_process_ctx;
}  // namespace internal

/// The interface version (mqs_version_compatibility) this host implements the callbacks of:
/// 2 is the MPI-1 interface every shipped DLL (Open MPI, MPICH) reports.
inline constexpr int msgq_interface_compatibility = 2;

/// Where a process says its message-queue DLL is (read from its memory).
struct msgq_dll_candidates {
    bool has_locations_symbol = false;      ///< `mpimsgq_dll_locations` exists
    std::vector<std::string> locations;     ///< its NULL-terminated entries, in order
    bool has_dll_name_symbol = false;       ///< `MPIR_dll_name` exists
    std::optional<std::string> dll_name;    ///< its string (when non-empty)

    /// Every path to try, in the order the interface says (locations first).
    std::vector<std::string> in_order() const;
};

/// Reads both symbols of `tgt` (any module: the MPI library defines them). Never throws for
/// a process that is not an MPI program: the result is simply empty.
msgq_dll_candidates find_msgq_dll_candidates(tracer::target& tgt);

/// A loaded message-queue DLL whose version and bitness were checked and whose basic
/// callbacks were installed.
class msgq_library {
public:
    /// Loads `file` under `policy`, resolves every entry point (naming the first missing
    /// one), checks mqs_version_compatibility() == msgq_interface_compatibility and
    /// mqs_dll_taddr_width() == 8 (a 64-bit target), then mqs_setup_basic_callbacks. The same
    /// file is loaded once per debugger. Throws ompdbg::error with one line naming the file.
    static std::shared_ptr<msgq_library> load(const std::filesystem::path& file,
                                              const plugin_policy& policy);
    /// The first candidate of `tgt` that loads; throws one error listing each candidate and
    /// why it failed, or saying that the process names no message-queue DLL (not an MPI
    /// program, or an MPI library without message-queue support).
    static std::shared_ptr<msgq_library> load_for(tracer::target& tgt, const plugin_policy& policy);
    ~msgq_library();
    msgq_library(const msgq_library&) = delete;
    msgq_library& operator=(const msgq_library&) = delete;

    const std::filesystem::path& path() const { return lib_->path(); }
    const std::string& version_string() const { return version_string_; }
    int compatibility() const { return compatibility_; }
    int taddr_width() const { return taddr_width_; }
    /// The DLL's own text for one of its error codes (mqs_dll_error_string), or
    /// "error N" when it has none.
    std::string error_string(int code) const;
    const internal::msgq_api& api() const { return *api_; }

private:
    msgq_library() = default;
    std::unique_ptr<plugin_library> lib_;
    std::unique_ptr<internal::msgq_api> api_;
    std::string version_string_;
    int compatibility_ = 0;
    int taddr_width_ = 0;
};

/// mqs_status.
enum class msgq_status { pending, matched, complete };
std::string to_string(msgq_status s);

/// Which queue an operation came from (mqs_op_class).
enum class msgq_queue { pending_sends, pending_receives, unexpected_messages };

/// One entry of a queue (mqs_pending_operation), as the DLL reports it.
struct msgq_operation {
    msgq_queue queue = msgq_queue::pending_sends;
    msgq_status status = msgq_status::pending;
    std::int64_t desired_local_rank = -1;    ///< peer in the communicator, -1: MPI_ANY_SOURCE
    std::int64_t desired_global_rank = -1;   ///< the same in MPI_COMM_WORLD
    bool tag_wild = false;                   ///< MPI_ANY_TAG
    std::int64_t desired_tag = 0;
    std::int64_t desired_length = 0;         ///< bytes of the buffer
    bool system_buffer = false;
    std::uint64_t buffer = 0;
    /// Valid when status >= matched, or for sends.
    std::int64_t actual_local_rank = -1;
    std::int64_t actual_global_rank = -1;
    std::int64_t actual_tag = 0;
    std::int64_t actual_length = 0;
    std::vector<std::string> extra_text;     ///< the non-empty extra_text lines
    /// Element count and datatype name, when the DLL's request address (extra_text "Send:
    /// 0x..."/"Receive: 0x...") can be read through the MPI library's DWARF (Open MPI's
    /// mca_pml_base_request_t). The DLL itself reports bytes only.
    std::optional<std::uint64_t> count;
    std::string datatype;
};

/// The result of iterating one queue.
struct msgq_queue_contents {
    bool available = true;                   ///< false: the DLL has no information
    std::string unavailable_reason;          ///< e.g. "the DLL reports no information (mqs_no_information)"
    std::vector<msgq_operation> operations;
    /// Empty when the DLL filled the queue; otherwise who did: the unexpected queue of Open
    /// MPI's ob1 PML, for which Open MPI's DLL has no information, is read by ompdbg itself
    /// from mca_pml_ob1.so's DWARF (msgq_ob1_reader_name). Its operations have status
    /// pending, the sender as desired and actual rank, the message's tag and byte length,
    /// system_buffer set and `buffer` the eager data ob1 holds (0 for a rendezvous message,
    /// whose data is still at the sender); extra_text says "out of sequence" for a fragment
    /// that arrived before an earlier one of its sender.
    std::string reader;
};

/// msgq_queue_contents::reader of the queues ompdbg reads from Open MPI's ob1 PML.
inline constexpr const char* msgq_ob1_reader_name = "ompdbg's reader of Open MPI's ob1 PML";

/// ob1's counts of the messages between this process and one peer of a communicator.
struct msgq_peer_sequence {
    std::int64_t peer_local = 0;    ///< the peer's rank in the communicator
    std::int64_t peer_global = -1;  ///< the same in MPI_COMM_WORLD (-1: unknown)
    std::uint32_t sent = 0;         ///< messages this process started sending to the peer
    std::uint16_t arrived = 0;      ///< the peer's messages that arrived here in order (matched or unexpected)
};

/// One communicator (mqs_communicator + mqs_get_comm_group) and its three queues.
struct msgq_communicator {
    std::uint64_t unique_id = 0;
    std::string name;                        ///< as set with MPI_Comm_set_name (or the MPI's default)
    std::int64_t local_rank = 0;
    std::int64_t size = 0;
    std::vector<int> world_ranks;            ///< index: local rank; empty when the DLL cannot tell
    msgq_queue_contents sends, receives, unexpected;
    /// Open MPI ob1's message sequence numbers with each peer, read by ompdbg itself
    /// (msgq_ob1_reader_name): the evidence of whether messages move, and of messages on
    /// their way (a peer sent more than this process has seen arrive). Empty with
    /// sequences_note saying why when they cannot be read (another MPI or PML, no DWARF).
    std::vector<msgq_peer_sequence> sequences;
    bool sequences_read = false;
    std::string sequences_note;
};

/// One MPI process seen through the DLL: mqs_setup_image / mqs_image_has_queues /
/// mqs_setup_process / mqs_process_has_queues happen in the constructor.
class msgq_process {
public:
    /// `global_rank` is the process's rank in MPI_COMM_WORLD (mqs_get_global_rank).
    /// Throws ompdbg::error when the DLL cannot show this process's queues; when types or
    /// fields are missing from the MPI library's debug information the message names every
    /// one of them and says how to get an MPI library built with debug information.
    msgq_process(std::shared_ptr<msgq_library> lib, tracer::target& tgt, int global_rank);
    ~msgq_process();
    msgq_process(const msgq_process&) = delete;
    msgq_process& operator=(const msgq_process&) = delete;

    int global_rank() const;
    tracer::target& target() const;
    /// Every communicator with its queues, in the DLL's order (mqs_update_communicator_list
    /// first, so it reflects the stopped process now). Throws ompdbg::error with the DLL's
    /// error text when it fails.
    std::vector<msgq_communicator> communicators();

private:
    /// Gives the DLL's image and process info back and unregisters our contexts.
    void release() noexcept;
    /// Fills the unexpected queues the DLL has no information about, and every
    /// communicator's sequence numbers, from ob1's lists.
    void fill_unexpected_from_ob1(std::vector<msgq_communicator>& comms);
    std::shared_ptr<msgq_library> lib_;
    std::unique_ptr<internal::msgq_image_ctx> image_;
    std::unique_ptr<internal::msgq_process_ctx> process_;
};

/// The MPI_COMM_WORLD rank of a live process from its environment (OMPI_COMM_WORLD_RANK,
/// PMIX_RANK, PMI_RANK), for a session attached to a single rank.
std::optional<int> mpi_rank_from_environment(pid_t pid);

/// The same from a list of "NAME=VALUE" entries (a core's environment read from its
/// memory): OMPI_COMM_WORLD_RANK first, then PMIX_RANK, then PMI_RANK.
std::optional<int> mpi_rank_from_environment(const std::vector<std::string>& entries);

}  // namespace ompdbg::plugins
