#pragma once
// The read-only segments of a remote process's module files, read from the files here instead
// of through the agent (gdb's `set trust-readonly-sections`): code, read-only data and unwind
// tables are most of what a backtrace reads, and a page through gdbserver is an 8 kB hex
// packet. Only files whose build-id note matches the process's memory are used, never one the
// loader relocates in place (text relocations), and never a page the debugger wrote.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "ompdbg/tracer/target.hpp"

namespace ompdbg::tracer::internal {

class readonly_segments {
public:
    /// The modules changed (a resume): their ranges are added again by add().
    void clear() { ranges_.clear(); }
    /// `m`'s read-only segments, once its file is known to be the one the process maps.
    void add(const loaded_module& m);
    /// The debugger wrote [addr, addr + size): those pages come from the process from now on.
    void note_write(std::uint64_t addr, std::size_t size);
    /// Bytes at `addr` copied from a file into `out`, as many as lie in one trusted segment
    /// from `addr` on (at most out.size()); 0 when `addr` is not in one.
    std::size_t read(std::uint64_t addr, std::span<std::byte> out) const;

private:
    struct range {
        std::uint64_t start = 0, end = 0;   ///< run-time addresses
        std::uint64_t bias = 0;
        std::shared_ptr<dwarf::elf_file> elf;
    };
    std::vector<range> ranges_;             ///< sorted by start, disjoint
    std::set<std::uint64_t> written_pages_; ///< kept for the process's life
};

}  // namespace ompdbg::tracer::internal
