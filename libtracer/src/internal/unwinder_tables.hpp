#pragma once
// Where the unwind tables of one mapped ELF image are: its executable ranges and its
// .eh_frame_hdr binary-search table (PT_GNU_EH_FRAME), as run-time addresses. Read from the
// ELF file's program headers (or, for the vdso, from the image in target memory), never
// through ptrace, so that live processes and core files are handled alike.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace ompdbg::tracer::detail {

struct unwind_table {
    /// Run-time [start, end) of every PT_LOAD segment (the module's whole image).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> load_ranges;
    /// Run-time [start, end) of the executable PT_LOAD segments.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> exec_ranges;
    /// Run-time address of .eh_frame_hdr; 0 when the image has no usable search table.
    std::uint64_t eh_frame_hdr = 0;
    /// Run-time address of the sorted (initial_location, fde) table inside .eh_frame_hdr.
    std::uint64_t table_data = 0;
    std::uint64_t fde_count = 0;

    bool contains(std::uint64_t addr) const;
    bool is_executable(std::uint64_t addr) const;
    std::uint64_t exec_start() const;
    std::uint64_t exec_end() const;
};

/// Reads `size` bytes at file offset `offset` of the image; nullopt when out of range.
using image_reader = std::function<std::optional<std::vector<std::byte>>(std::uint64_t offset,
                                                                          std::size_t size)>;

/// Parses the ELF header, program headers and .eh_frame_hdr header of an image whose
/// load bias is `bias`. nullopt when it is not a 64-bit x86-64 ELF image.
std::optional<unwind_table> read_unwind_table(const image_reader& read, std::uint64_t bias);

/// Same, for a file on disk.
std::optional<unwind_table> read_unwind_table(const std::filesystem::path& path,
                                              std::uint64_t bias);

/// Same, for an image held in memory (the vdso copied out of the target), mapped at
/// `runtime_start`. The bias is derived from its first PT_LOAD.
std::optional<unwind_table> read_unwind_table_image(std::span<const std::byte> image,
                                                    std::uint64_t runtime_start);

}  // namespace ompdbg::tracer::detail
