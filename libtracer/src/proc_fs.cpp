#include "ompdbg/tracer/proc_fs.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

namespace ompdbg::tracer::proc_fs {

std::string read_small_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return {};
    }
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) {
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

std::vector<pid_t> list_tasks(pid_t pid) {
    std::vector<pid_t> out;
    std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        return out;
    }
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
            out.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
        }
    }
    ::closedir(d);
    return out;
}

auxv_entries read_auxv(pid_t pid) {
    std::string data = read_small_file("/proc/" + std::to_string(pid) + "/auxv");
    auxv_entries out;
    for (std::size_t off = 0; off + 16 <= data.size(); off += 16) {
        std::uint64_t k, v;
        std::memcpy(&k, data.data() + off, 8);
        std::memcpy(&v, data.data() + off + 8, 8);
        if (k == AT_NULL) {
            break;
        }
        out.emplace_back(k, v);
    }
    return out;
}

std::optional<std::uint64_t> auxv_value(const auxv_entries& auxv, unsigned long type) {
    for (const auto& [k, v] : auxv) {
        if (k == type) {
            return v;
        }
    }
    return std::nullopt;
}

std::optional<std::uint64_t> auxv_value(pid_t pid, unsigned long type) { return auxv_value(read_auxv(pid), type); }

std::string thread_comm(pid_t pid, pid_t tid) {
    std::string s = read_small_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
    while (!s.empty() && s.back() == '\n') {
        s.pop_back();
    }
    return s;
}

char thread_state_letter(pid_t pid, pid_t tid) { return read_thread_stat(pid, tid).state; }

thread_stat read_thread_stat(pid_t pid, pid_t tid) {
    std::string s = read_small_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
    // "tid (comm) S ...": comm may contain ')' so search from the right; field 3 (the
    // state) follows it, utime and stime are fields 14 and 15.
    thread_stat out;
    auto p = s.rfind(')');
    if (p == std::string::npos || p + 2 >= s.size()) {
        return out;
    }
    out.state = s[p + 2];
    std::istringstream fields(s.substr(p + 2));
    std::string field;
    long utime = 0, stime = 0;
    for (int n = 3; n <= 15 && fields >> field; ++n) {
        if (n == 14) {
            utime = std::atol(field.c_str());
        } else if (n == 15) {
            stime = std::atol(field.c_str());
            out.cpu_ticks = utime + stime;
        }
    }
    return out;
}

std::filesystem::path process_exe(pid_t pid) {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    return ec ? std::filesystem::path{} : p;
}

std::optional<pid_t> tracer_pid(pid_t pid) {
    std::string s = read_small_file("/proc/" + std::to_string(pid) + "/status");
    auto p = s.find("TracerPid:");
    if (p == std::string::npos) {
        return std::nullopt;
    }
    return static_cast<pid_t>(std::atoi(s.c_str() + p + 10));
}

bool signal_queued(pid_t pid, pid_t tid, int signo) {
    if (signo < 1 || signo > 64) {
        return false;
    }
    const std::uint64_t bit = std::uint64_t{1} << (signo - 1);
    auto has_bit = [&](std::optional<std::string> mask) {
        return mask && (std::strtoull(mask->c_str(), nullptr, 16) & bit) != 0;
    };
    return has_bit(status_field(pid, 0, "ShdPnd")) || has_bit(status_field(pid, tid, "SigPnd"));
}

std::vector<map_entry> read_maps(pid_t pid) {
    std::vector<map_entry> out;
    std::istringstream in(read_small_file("/proc/" + std::to_string(pid) + "/maps"));
    std::string line;
    while (std::getline(in, line)) {
        map_entry e{};
        char perms[8] = {};
        unsigned long long start = 0, end = 0, offset = 0;
        int consumed = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms, &offset, &consumed) < 4) {
            continue;
        }
        e.start = start;
        e.end = end;
        e.offset = offset;
        e.perms = perms;
        std::string rest = line.substr(static_cast<std::size_t>(consumed));
        auto b = rest.find_first_not_of(' ');
        e.path = b == std::string::npos ? "" : rest.substr(b);
        out.push_back(std::move(e));
    }
    return out;
}

std::optional<std::string> status_field(pid_t pid, pid_t tid, std::string_view key) {
    std::string path = tid == 0 ? "/proc/" + std::to_string(pid) + "/status"
                                : "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status";
    std::istringstream in(read_small_file(path));
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
            auto b = line.find_first_not_of(" \t", key.size() + 1);
            auto e = line.find_last_not_of(" \t");
            return b == std::string::npos ? std::string() : line.substr(b, e - b + 1);
        }
    }
    return std::nullopt;
}

}  // namespace ompdbg::tracer::proc_fs
