// Files of another host, fetched through the agent and cached by build-id
// (remote_files.hpp). gdb reads them through vFile: on every session (`target:` sysroot);
// here a session that finds the build-id in the cache transfers nothing.
#include "ompdbg/tracer/remote_files.hpp"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "ompdbg/base/cache_dir.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/tracer/rsp_client.hpp"

namespace ompdbg::tracer {

namespace fs = std::filesystem;

namespace {

/// Reads up to `size` bytes at `offset` of a file (fewer at its end).
using file_reader = std::function<std::string(std::uint64_t offset, std::size_t size)>;

/// Every byte of [offset, offset+size), read in as many pieces as the reader returns.
std::string read_exactly(const file_reader& read, std::uint64_t offset, std::size_t size) {
    std::string out;
    while (out.size() < size) {
        std::string got = read(offset + out.size(), size - out.size());
        if (got.empty()) {
            break;
        }
        out += got;
    }
    return out;
}

/// The GNU build-id (lowercase hex) of a 64-bit ELF file from its PT_NOTE segments, the way
/// the loader sees the file: headers, then the notes. nullopt when it has none; throws
/// for a file that is not a 64-bit ELF file.
std::optional<std::string> build_id_in(const file_reader& read, std::string_view what) {
    Elf64_Ehdr eh;
    std::string bytes = read_exactly(read, 0, sizeof eh);
    if (bytes.size() != sizeof eh || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
        bytes[EI_CLASS] != ELFCLASS64) {
        error::send(fmt::format("\"{}\": not in executable format: file format not recognized", what));
    }
    std::memcpy(&eh, bytes.data(), sizeof eh);
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 1024) {
        return std::nullopt;
    }
    std::string table = read_exactly(read, eh.e_phoff, std::size_t{eh.e_phnum} * sizeof(Elf64_Phdr));
    for (std::size_t i = 0; i + sizeof(Elf64_Phdr) <= table.size(); i += sizeof(Elf64_Phdr)) {
        Elf64_Phdr ph;
        std::memcpy(&ph, table.data() + i, sizeof ph);
        if (ph.p_type != PT_NOTE || ph.p_filesz > (std::uint64_t{1} << 20)) {
            continue;
        }
        std::string notes = read_exactly(read, ph.p_offset, ph.p_filesz);
        const std::size_t align = ph.p_align == 8 ? 8 : 4;
        auto up = [align](std::size_t n) { return (n + align - 1) & ~(align - 1); };
        for (std::size_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
            Elf64_Nhdr nh;
            std::memcpy(&nh, notes.data() + at, sizeof nh);
            std::size_t name_at = at + sizeof nh;
            std::size_t desc_at = name_at + up(nh.n_namesz);
            std::size_t next = desc_at + up(nh.n_descsz);
            if (nh.n_namesz > notes.size() || nh.n_descsz > notes.size() || desc_at + nh.n_descsz > notes.size()) {
                break;
            }
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && notes.compare(name_at, 4, "GNU\0", 4) == 0 &&
                nh.n_descsz > 0) {
                std::string hex;
                for (std::size_t k = 0; k < nh.n_descsz; ++k) {
                    hex += fmt::format("{:02x}", static_cast<unsigned char>(notes[desc_at + k]));
                }
                return hex;
            }
            at = next;
        }
    }
    return std::nullopt;
}

/// The build-id of a file here, read as build_id_in reads the host's; nullopt when the file
/// cannot be read or has none.
std::optional<std::string> local_build_id(const fs::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    file_reader read = [fd](std::uint64_t offset, std::size_t size) {
        std::string buf(size, '\0');
        ssize_t n = ::pread(fd, buf.data(), size, static_cast<off_t>(offset));
        buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        return buf;
    };
    std::optional<std::string> id;
    try {
        id = build_id_in(read, path.string());
    } catch (const error&) {
    }
    ::close(fd);
    return id;
}

/// An agent's descriptor, closed when the scope ends (a failure to close is only logged:
/// the transfer's own error, if any, is the one to report).
class remote_fd {
public:
    remote_fd(rsp::client& agent, std::string_view path) : agent_(agent), fd_(agent.file_open(path)) {}
    ~remote_fd() {
        try {
            agent_.file_close(fd_);
        } catch (const std::exception& e) {
            log::write(log::channel::ptrace, "vFile:close {}: {}", fd_, e.what());
        }
    }
    remote_fd(const remote_fd&) = delete;
    remote_fd& operator=(const remote_fd&) = delete;
    int get() const { return fd_; }

private:
    rsp::client& agent_;
    int fd_;
};

/// A file being written here: removed when the scope ends unless kept.
class partial_file {
public:
    /// mkstemp on `templ` (ending in XXXXXX).
    explicit partial_file(std::string templ) : path_(std::move(templ)) {
        fd_ = ::mkostemp(path_.data(), O_CLOEXEC);
        if (fd_ < 0) {
            error::send(fmt::format("Cannot create {}: {}", path_, std::strerror(errno)));
        }
    }
    ~partial_file() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        if (!kept_) {
            ::unlink(path_.c_str());
        }
    }
    partial_file(const partial_file&) = delete;
    partial_file& operator=(const partial_file&) = delete;

    void write(std::string_view data) {
        while (!data.empty()) {
            ssize_t n = ::write(fd_, data.data(), data.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                error::send(fmt::format("Cannot write {}: {}", path_, std::strerror(errno)));
            }
            data.remove_prefix(static_cast<std::size_t>(n));
        }
    }
    /// Closes it (mkstemp's mode 0600 stays: the cache is the user's own).
    void finish() {
        if (::close(std::exchange(fd_, -1)) != 0) {
            error::send(fmt::format("Cannot write {}: {}", path_, std::strerror(errno)));
        }
    }
    const std::string& path() const { return path_; }
    void keep() { kept_ = true; }

private:
    std::string path_;
    int fd_ = -1;
    bool kept_ = false;
};

}  // namespace

std::string read_host_file(rsp::client& agent, pid_t pid, std::string_view path, std::size_t limit) {
    agent.file_set_namespace(pid);
    remote_fd fd(agent, path);
    std::string text;
    while (text.size() < limit) {
        // /proc files say nothing of their size: read until a read returns nothing.
        auto chunk = agent.file_pread(fd.get(), std::min(agent.file_chunk(), limit - text.size()), text.size());
        if (chunk.empty()) {
            break;
        }
        text += chunk;
    }
    return text;
}

std::optional<fs::path> build_id_cache_dir() {
    if (auto home = cache_home()) {
        return *home / "build-id";
    }
    return std::nullopt;
}

fs::path build_id_cache_path(const fs::path& dir, std::string_view build_id) {
    return dir / std::string(build_id.substr(0, 2)) / std::string(build_id.substr(2));
}

remote_files::~remote_files() {
    if (!temp_dir_.empty()) {
        std::error_code ec;
        fs::remove_all(temp_dir_, ec);
    }
}

void remote_files::forget(const fs::path& host_path) {
    copies_.erase(host_path.string());
    failed_.erase(host_path.string());
}

fs::path remote_files::local_copy(rsp::client& agent, pid_t pid, const fs::path& host_path) {
    const std::string key = host_path.string();
    if (auto it = copies_.find(key); it != copies_.end()) {
        return it->second;
    }
    if (auto it = failed_.find(key); it != failed_.end()) {
        error::send(it->second);
    }
    try {
        // As gdb: the file the process sees, in its mount namespace (a container's, or a
        // private /tmp), not the agent's.
        bool in_namespace = agent.file_set_namespace(pid);
        // The agent's own namespace again at the end, for its other uses of vFile:.
        struct namespace_back {
            rsp::client& agent;
            bool on;
            ~namespace_back() {
                try {
                    if (on) {
                        agent.file_set_namespace(0);
                    }
                } catch (const std::exception& e) {
                    log::write(log::channel::ptrace, "vFile:setfs:0: {}", e.what());
                }
            }
        } back{agent, in_namespace};
        fs::path copy;
        {
            remote_fd fd(agent, key);
            file_reader read = [&](std::uint64_t offset, std::size_t size) {
                return agent.file_pread(fd.get(), size, offset);
            };
            auto id = build_id_in(read, key);
            auto dir = build_id_cache_dir();
            if (id && id->size() > 2 && dir && local_build_id(build_id_cache_path(*dir, *id)) == id) {
                copy = build_id_cache_path(*dir, *id);
                log::write(log::channel::ptrace, "{}: build-id {} is in the cache", key, *id);
                // Used now: the last to go when the cache is past its bound. The access time
                // only: the modification time stays the file's arrival.
                const struct timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
                ::utimensat(AT_FDCWD, copy.c_str(), times, 0);
            } else {
                copy = fetch(agent, fd.get(), host_path, id);
            }
        }
        copies_[key] = copy;
        return copy;
    } catch (const error& e) {
        failed_[key] = e.what();
        throw;
    }
}

fs::path remote_files::fetch(rsp::client& agent, int fd, const fs::path& host_path,
                             const std::optional<std::string>& build_id) {
    // Into the cache when the build-id names the file (a temporary file in the key's own
    // directory, renamed once complete and proven: another session never sees half a
    // file); else, or when the cache cannot be written, a temporary file of this connection.
    std::optional<fs::path> final_path;
    std::string templ;
    if (auto dir = build_id_cache_dir(); build_id && build_id->size() > 2 && dir) {
        auto target = build_id_cache_path(*dir, *build_id);
        std::error_code ec;
        fs::create_directories(target.parent_path(), ec);
        if (!ec) {
            final_path = target;
            templ = target.parent_path() / ("." + target.filename().string() + ".XXXXXX");
        } else {
            log::write(log::channel::ptrace, "build-id cache {}: {}", target.parent_path().string(), ec.message());
        }
    }
    if (!final_path) {
        if (temp_dir_.empty()) {
            const char* tmp = std::getenv("TMPDIR");
            std::string t = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/ompdbg-remote-XXXXXX";
            if (::mkdtemp(t.data()) == nullptr) {
                error::send(fmt::format("Cannot create a directory for files of the remote host ({}): {}", t,
                                        std::strerror(errno)));
            }
            temp_dir_ = t;
        }
        templ = temp_dir_ / fmt::format("{}-{}.XXXXXX", copies_.size(), host_path.filename().string());
    }
    partial_file out(templ);
    if (notice_) {
        notice_(host_path);
    }
    std::uint64_t offset = 0;
    for (;;) {
        std::string data = agent.file_pread(fd, agent.file_chunk(), offset);
        if (data.empty()) {
            break;
        }
        out.write(data);
        offset += data.size();
    }
    out.finish();
    log::write(log::channel::ptrace, "{}: fetched {} bytes from the remote host into {}", host_path.string(), offset,
               out.path());
    if (final_path) {
        // Proven before it is kept: the complete file's own build-id is the key.
        std::optional<std::string> got;
        try {
            got = dwarf::elf_file::open(out.path())->build_id();
        } catch (const error& e) {
            error::send(fmt::format("{} fetched from the remote host is not readable: {}", host_path.string(), e.what()));
        }
        if (got != build_id) {
            error::send(fmt::format("{} fetched from the remote host has build-id {}, not {}: it changed during the "
                                    "transfer",
                                    host_path.string(), got.value_or("(none)"), *build_id));
        }
        if (::rename(out.path().c_str(), final_path->c_str()) != 0) {
            error::send(fmt::format("Cannot rename {} to {}: {}", out.path(), final_path->string(), std::strerror(errno)));
        }
        out.keep();
        prune_build_id_cache(final_path->parent_path().parent_path(), build_id_cache_limit(), *final_path);
        return *final_path;
    }
    out.keep();
    return out.path();
}

}  // namespace ompdbg::tracer
