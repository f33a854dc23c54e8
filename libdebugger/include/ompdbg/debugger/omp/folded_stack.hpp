#pragma once
/// A thread's stack with the OpenMP runtime's frames folded away and each region it runs in
/// shown as one entry (issue 17's `bt` in a region, moved from the CLI by issue 19), over
/// omp/stack_folding.hpp: the CLI prints it as gdb-style lines
/// (`[omp parallel in main at fig8.c:21, thread 2 of 4]`), the DAP server as stack frames
/// and label frames (`#pragma omp parallel at fig8.c:21 · thread 2 of 4`).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ompdbg::debugger {

class session;

/// One entry of a folded stack, in the order shown (innermost first).
struct folded_entry {
    enum class kind {
        frame,      ///< frame `index` of thread `tid`'s stack (session::stack), its frame number there
        region,     ///< a parallel region thread `tid` runs in, its runtime frames folded
        continued,  ///< the stack goes on in thread `tid`, which encountered the region
    } what = kind::frame;
    pid_t tid = 0;
    std::size_t index = 0;
    // ---- a region ----
    std::string construct = "parallel";  ///< the OpenMP construct ("parallel")
    std::string parent;                  ///< the user's function the region's routine was outlined from
    std::string where;                   ///< "fig8.c:21" of the construct; empty when unknown
    /// Thread `tid`'s OpenMP thread number and its team's size in the region, when the
    /// runtime can tell.
    std::optional<std::pair<std::int64_t, std::int64_t>> position;
    /// A team member's region: the thread that encountered it, when found.
    std::optional<pid_t> encountered_by;
};

/// Thread `tid`'s stack folded: its frames, the runtime's frames of each region it runs
/// replaced by a region entry. A team member's stack ends at its region (its frames above
/// the region are the encountering thread's); with `continued` a `continued` entry and the
/// encountering thread's frames from the construct on follow, as deep as regions nest.
/// nullopt when there is nothing to fold: no usable DMPL library, or `tid` runs no outlined
/// region routine (the plain stack applies).
std::optional<std::vector<folded_entry>> folded_stack(session& s, pid_t tid, bool continued);

/// The stack plain `bt` shows of thread `tid` when it is folded: folded_stack(s, tid, false)
/// under `set omp-bt-filter on` (the default); nullopt when the filter is off or there is
/// nothing to fold (the plain stack, session::stack, applies).
std::optional<std::vector<folded_entry>> bt_folded_stack(session& s, pid_t tid);

}  // namespace ompdbg::debugger
