#pragma once
// Compressed DWARF sections (SHF_COMPRESSED, zlib: Debian's separate debug files) inflated
// once per machine instead of once per session: libdw inflates every debug section when a
// file's DWARF is opened, which was a third of the CPU of attaching and backtracing 256
// threads (libc's 3.8 MB of zlib). The inflated bytes are kept in a cache directory, keyed
// by the file's build-id, and mapped by later sessions.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "internal/elf_handle.hpp"

namespace ompdbg::dwarf::internal {

/// Memory holding inflated sections handed to libelf; must outlive the Dwarf read from them.
class inflated_sections {
public:
    inflated_sections() = default;
    ~inflated_sections();
    inflated_sections(const inflated_sections&) = delete;
    inflated_sections& operator=(const inflated_sections&) = delete;

    /// Replaces the data of every zlib-compressed .debug_* section of `h` by its inflated
    /// bytes (read from the cache when `build_id` is known and a complete copy is there;
    /// else inflated here and written to the cache). A section that cannot be inflated is
    /// left to libdw. Never throws; problems go to the dwarf log channel.
    void inflate(const elf_handle& h, const std::optional<std::string>& build_id);

private:
    struct mapping {
        void* addr;
        std::size_t size;
    };
    std::vector<mapping> mappings_;
    std::vector<std::unique_ptr<unsigned char[]>> buffers_;
};

}  // namespace ompdbg::dwarf::internal
