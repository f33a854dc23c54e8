#pragma once
/// The program and libraries of processes on another host as files here, for a module whose
/// file at the same path here is missing or another build (gdb's `target:` sysroot, with a
/// cache): the host's file is read through the agent's vFile: packets (in the process's
/// mount namespace, vFile:setfs) once, into a cache keyed by its build-id —
/// $XDG_CACHE_HOME/ompdbg/build-id/XX/REST, else ~/.cache/ompdbg/build-id/XX/REST, the
/// layout of gdb's `.build-id` directories for whole objects — where later sessions find
/// it without a transfer. The cache is bounded (OMPDBG_BUILD_ID_CACHE_LIMIT, default 2 GiB):
/// past the bound, the files used least recently go. A file without a build-id cannot be cached under a key it proves:
/// it is fetched once per connection into a temporary file removed with the connection.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::tracer {

namespace rsp {
class client;
}

/// The build-id cache's directory ($XDG_CACHE_HOME/ompdbg/build-id, else
/// $HOME/.cache/ompdbg/build-id); nullopt when neither variable holds an absolute path.
std::optional<std::filesystem::path> build_id_cache_dir();
/// Where the file of `build_id` (lowercase hex, at least 2 digits) lies in `dir`: XX/REST.
std::filesystem::path build_id_cache_path(const std::filesystem::path& dir, std::string_view build_id);

/// The cache's size bound when OMPDBG_BUILD_ID_CACHE_LIMIT does not set one: 2 GiB.
inline constexpr std::uint64_t default_build_id_cache_limit = 2ULL << 30;
/// A size as OMPDBG_BUILD_ID_CACHE_LIMIT gives it: bytes, or a number with K, M or G
/// (powers of 1024); "0" or "unlimited": no bound (0). nullopt when it is not a size.
std::optional<std::uint64_t> parse_cache_limit(std::string_view text);
/// The bound in bytes (OMPDBG_BUILD_ID_CACHE_LIMIT, else the default); 0: none.
std::uint64_t build_id_cache_limit();
/// Removes the least recently used files of the cache in `dir` (by access time, which a
/// use sets; never earlier than the file's arrival) until their sizes add up to `limit` bytes or less, never `keep`
/// (the file just added) nor a transfer in progress; empty XX directories go with their
/// last file. `limit` 0: nothing. Returns the removed files. Never throws: a file that
/// cannot be removed is left.
std::vector<std::filesystem::path> prune_build_id_cache(const std::filesystem::path& dir, std::uint64_t limit,
                                                        const std::filesystem::path& keep = {});

/// The text of a small file of the agent's host (/proc/sys/..., /proc/PID/status), at most
/// `limit` bytes, read through vFile: in the mount namespace of `pid` (0: the agent's own).
/// Throws as rsp::client::file_open ("PATH on the remote host: No such file or directory").
std::string read_host_file(rsp::client& agent, pid_t pid, std::string_view path, std::size_t limit = 65536);

/// One agent's fetched files (remote_connection::files()). Not thread-safe: used by the
/// processes of one connection, from one thread at a time.
class remote_files {
public:
    /// Told the host's path of each file just before its transfer begins (gdb prints
    /// "Reading PATH from remote target..."); not for a file the cache holds.
    using notice = std::function<void(const std::filesystem::path& host_path)>;

    remote_files() = default;
    /// Removes the temporary copies of files without a build-id.
    ~remote_files();
    remote_files(const remote_files&) = delete;
    remote_files& operator=(const remote_files&) = delete;

    void set_notice(notice n) { notice_ = std::move(n); }

    /// A file here with the contents of `host_path` as process `pid` of the agent's host
    /// sees it: the cache's copy when the file's build-id is there, else the file fetched
    /// now (then kept for the next call). The host's build-id is read from the file's own
    /// notes (vFile:pread of its headers); a fetched file is renamed into the cache only
    /// when its build-id is that one. Throws ompdbg::error when the agent cannot read the
    /// file (no vFile:, no such file there: the host's errno), or the copy cannot be
    /// written here; the failure is kept, and thrown again for that path without a new
    /// attempt until forget().
    std::filesystem::path local_copy(rsp::client& agent, pid_t pid, const std::filesystem::path& host_path);
    /// Drops what local_copy kept for `host_path` (its copy turned out not to be the file
    /// the process maps: the host's file changed since).
    void forget(const std::filesystem::path& host_path);

private:
    std::filesystem::path fetch(rsp::client& agent, int fd, const std::filesystem::path& host_path,
                                const std::optional<std::string>& build_id);

    notice notice_;
    std::map<std::string, std::filesystem::path> copies_;   ///< host path → the file here
    std::map<std::string, std::string> failed_;             ///< host path → why it cannot be read
    std::filesystem::path temp_dir_;                         ///< copies without a build-id; made on first need
};

}  // namespace ompdbg::tracer
