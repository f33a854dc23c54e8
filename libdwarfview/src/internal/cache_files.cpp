#include "internal/cache_files.hpp"

#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ompdbg::dwarf::internal {

namespace fs = std::filesystem;

std::optional<mapped_file> mapped_file::open(const fs::path& p, std::uint64_t max_size) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    std::optional<mapped_file> out;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        static_cast<std::uint64_t>(st.st_size) <= max_size) {
        const auto size = static_cast<std::size_t>(st.st_size);
        void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (addr != MAP_FAILED) {
            ::futimens(fd, nullptr);
            out.emplace(mapped_file(addr, size));
        }
    }
    ::close(fd);
    return out;
}

mapped_file::mapped_file(mapped_file&& other) noexcept : addr_(other.addr_), size_(other.size_) {
    other.addr_ = nullptr;
    other.size_ = 0;
}

mapped_file::~mapped_file() {
    if (addr_ != nullptr) {
        ::munmap(addr_, size_);
    }
}

std::optional<std::string> write_file_atomically(const fs::path& p, const void* bytes, std::size_t size) {
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec) {
        return ec.message();   // "Permission denied": the reason, not mkstemp's ENOENT after it
    }
    std::string tmp = p.string() + ".XXXXXX";
    int fd = ::mkstemp(tmp.data());
    if (fd < 0) {
        return std::string(std::strerror(errno));
    }
    const auto* data = static_cast<const unsigned char*>(bytes);
    std::size_t done = 0;
    int failure = 0;
    while (done < size) {
        ssize_t n = ::write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            failure = n < 0 ? errno : ENOSPC;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    if (failure == 0 && ::fchmod(fd, 0644) != 0) {
        failure = errno;
    }
    if (::close(fd) != 0 && failure == 0) {
        failure = errno;
    }
    if (failure == 0 && ::rename(tmp.c_str(), p.c_str()) != 0) {
        failure = errno;
    }
    if (failure != 0) {
        ::unlink(tmp.c_str());
        return std::string(std::strerror(failure));
    }
    return std::nullopt;
}

void evict_least_recent(const fs::path& dir, const fs::path& keep, std::uint64_t limit) {
    struct entry {
        fs::file_time_type used;
        std::uint64_t size;
        fs::path path;
    };
    std::vector<entry> files;
    std::uint64_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (!it->is_regular_file(e2)) {
            continue;
        }
        auto size = it->file_size(e2);
        auto used = it->last_write_time(e2);
        if (e2) {
            continue;
        }
        total += size;
        files.push_back({used, size, it->path()});
    }
    if (total <= limit) {
        return;
    }
    std::sort(files.begin(), files.end(), [](const entry& a, const entry& b) { return a.used < b.used; });
    for (const entry& f : files) {
        if (total <= limit) {
            break;
        }
        if (f.path == keep) {
            continue;
        }
        if (fs::remove(f.path, ec)) {
            total -= f.size;
            log::write(log::channel::dwarf, "cache: evicted {}", f.path.string());
        }
    }
}

std::uint64_t megabytes_from_env(const char* variable, std::uint64_t fallback_mb) {
    if (const char* v = std::getenv(variable); v != nullptr && *v != '\0') {
        char* end = nullptr;
        unsigned long long mb = std::strtoull(v, &end, 10);
        if (end != nullptr && *end == '\0') {
            return mb << 20;
        }
    }
    return fallback_mb << 20;
}

}  // namespace ompdbg::dwarf::internal
