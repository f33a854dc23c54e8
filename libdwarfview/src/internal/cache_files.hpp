#pragma once
// Files of ompdbg's caches (inflated sections, the index cache): written whole or not at
// all, and a directory kept under a size bound. Parallel sessions (and the parallel test
// suite) share these directories: a reader never sees a partial file.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ompdbg::dwarf::internal {

/// Writes `size` bytes to `p` through a temporary file in the same directory renamed into
/// place (the directory is created when missing). Returns the reason when it could not
/// (the system's message, e.g. "Permission denied"); the temporary file is removed then.
std::optional<std::string> write_file_atomically(const std::filesystem::path& p, const void* bytes,
                                                 std::size_t size);

/// Keeps the regular files of `dir` under `limit` bytes in all: removes those used least
/// recently (by modification time: readers touch a file at each use) until they fit,
/// sparing `keep`, the file just written. A session that maps a removed file keeps its
/// pages (unlink, not truncate).
void evict_least_recent(const std::filesystem::path& dir, const std::filesystem::path& keep, std::uint64_t limit);

/// A whole cache file mapped read-only (private): reading a table in place costs a few
/// page-cache faults where a read() copies it into fresh pages (libc's symbol table: 60 us
/// against 10). Writers rename new files into place and eviction unlinks, so a mapped file
/// never changes under its reader.
class mapped_file {
public:
    /// The regular file at `p`, when it holds between 1 and `max_size` bytes; a use marks
    /// it recent for evict_least_recent().
    static std::optional<mapped_file> open(const std::filesystem::path& p, std::uint64_t max_size);
    mapped_file(mapped_file&& other) noexcept;
    mapped_file& operator=(mapped_file&&) = delete;
    mapped_file(const mapped_file&) = delete;
    ~mapped_file();

    const unsigned char* data() const { return static_cast<const unsigned char*>(addr_); }
    std::size_t size() const { return size_; }

private:
    mapped_file(void* addr, std::size_t size) : addr_(addr), size_(size) {}
    void* addr_ = nullptr;
    std::size_t size_ = 0;
};

/// The bytes of an index-cache table: built or copied here, or a cache file read in place
/// (the mapping shared by copies of the table). Each form converts, so that one parse()
/// of a table format takes any of them.
class table_bytes {
public:
    table_bytes() = default;
    table_bytes(std::vector<unsigned char> owned) : owned_(std::move(owned)) {}
    table_bytes(std::span<const unsigned char> copied) : owned_(copied.begin(), copied.end()) {}
    table_bytes(mapped_file file) : mapped_(std::make_shared<const mapped_file>(std::move(file))) {}

    const unsigned char* data() const { return mapped_ ? mapped_->data() : owned_.data(); }
    std::size_t size() const { return mapped_ ? mapped_->size() : owned_.size(); }
    std::span<const unsigned char> span() const { return {data(), size()}; }
    /// The bytes a builder writes (a table being built is never a mapping).
    std::vector<unsigned char>& building() { return owned_; }

private:
    std::vector<unsigned char> owned_;
    std::shared_ptr<const mapped_file> mapped_;
};

/// `variable` read as a number of megabytes, in bytes; `fallback_mb` when unset or not a
/// number.
std::uint64_t megabytes_from_env(const char* variable, std::uint64_t fallback_mb);

}  // namespace ompdbg::dwarf::internal
