// MPI2DD as an executable file presents it before it runs (mpi2dd::find_in_file): the
// program's own symbols, then those of the libraries it names, found the way the dynamic
// loader finds them (ld.so(8), "Rpath token expansion" and the search order).

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <elf.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/tracer/mpi2dd.hpp"

namespace ompdbg::tracer::mpi2dd {

namespace {

namespace fs = std::filesystem;

struct dynamic_names {
    std::vector<std::string> needed;
    std::string rpath, runpath;   ///< colon-separated, as in the file
};

// A NUL-terminated string of the file at file address `addr`.
std::string file_string(const dwarf::elf_file& elf, std::uint64_t addr) {
    auto bytes = elf.read_bytes(addr, 4096);
    std::string out;
    for (std::byte b : bytes) {
        if (b == std::byte{0}) {
            return out;
        }
        out.push_back(static_cast<char>(b));
    }
    return {};   // unterminated: not a name we can use
}

// DT_NEEDED, DT_RPATH and DT_RUNPATH of the .dynamic section (none for a static program).
dynamic_names read_dynamic(const dwarf::elf_file& elf) {
    dynamic_names out;
    auto dyn = elf.section(".dynamic");
    if (!dyn || dyn->addr == 0) {
        return out;
    }
    auto bytes = elf.read_bytes(dyn->addr, dyn->size);
    std::vector<Elf64_Dyn> entries(bytes.size() / sizeof(Elf64_Dyn));
    std::memcpy(entries.data(), bytes.data(), entries.size() * sizeof(Elf64_Dyn));
    std::uint64_t strtab = 0;
    for (const auto& e : entries) {
        if (e.d_tag == DT_STRTAB) {
            strtab = e.d_un.d_ptr;
        }
    }
    if (strtab == 0) {
        return out;
    }
    for (const auto& e : entries) {
        if (e.d_tag == DT_NULL) {
            break;
        }
        if (e.d_tag == DT_NEEDED) {
            out.needed.push_back(file_string(elf, strtab + e.d_un.d_val));
        } else if (e.d_tag == DT_RPATH) {
            out.rpath = file_string(elf, strtab + e.d_un.d_val);
        } else if (e.d_tag == DT_RUNPATH) {
            out.runpath = file_string(elf, strtab + e.d_un.d_val);
        }
    }
    return out;
}

// The directories of a colon-separated path list, $ORIGIN (and ${ORIGIN}) replaced.
void add_dirs(std::vector<fs::path>& dirs, const std::string& list, const fs::path& origin) {
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find(':', start);
        std::string d = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
        for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
            for (std::size_t at; (at = d.find(token)) != std::string::npos;) {
                d.replace(at, std::strlen(token), origin.string());
            }
        }
        if (!d.empty()) {
            dirs.emplace_back(d);
        }
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
}

std::vector<fs::path> search_dirs(const dynamic_names& names, const fs::path& origin) {
    std::vector<fs::path> dirs;
    if (names.runpath.empty()) {
        add_dirs(dirs, names.rpath, origin);   // DT_RPATH counts only without DT_RUNPATH
    }
    if (const char* env = std::getenv("LD_LIBRARY_PATH")) {
        add_dirs(dirs, env, origin);
    }
    add_dirs(dirs, names.runpath, origin);
    for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
                          "/usr/lib"}) {
        dirs.emplace_back(d);
    }
    return dirs;
}

std::optional<fs::path> find_library(const std::string& name, const std::vector<fs::path>& dirs) {
    if (name.empty()) {
        return std::nullopt;
    }
    if (name.find('/') != std::string::npos) {
        return fs::path(name);
    }
    for (const auto& d : dirs) {
        std::error_code ec;
        if (fs::is_regular_file(d / name, ec)) {
            return d / name;
        }
    }
    return std::nullopt;
}

// Whether `elf` defines `name` (a symbol with an address: not an undefined reference).
std::optional<dwarf::symbol> defined(const dwarf::elf_file& elf, std::string_view name) {
    for (const auto& sym : elf.find_symbols(name)) {
        if (sym.value != 0) {
            return sym;
        }
    }
    return std::nullopt;
}

// Whether a library's dynamic string table names `name` at all: a variable another module
// can find is exported (.dynsym), so a library without the name is passed over without
// indexing its symbols (every program names libc; OpenMP and MPI ones much more).
bool exports_name(const dwarf::elf_file& elf, std::string_view name) {
    auto dynstr = elf.section(".dynstr");
    if (!dynstr || dynstr->addr == 0) {
        return false;
    }
    auto bytes = elf.read_bytes(dynstr->addr, dynstr->size);
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return text.find(name) != std::string_view::npos;
}

}  // namespace

std::optional<file_interface> find_in_file(const fs::path& program, const elf_provider& elves) {
    auto open = [&](const fs::path& p) -> std::shared_ptr<dwarf::elf_file> {
        if (elves) {
            if (auto elf = elves(p)) {
                return elf;
            }
        }
        return dwarf::elf_file::open(p);
    };
    std::optional<file_interface> found;
    bool breakpoint = false;
    auto look = [&](const dwarf::elf_file& elf, const fs::path& path) {
        breakpoint = breakpoint || defined(elf, "MPI2DD_breakpoint").has_value();
        if (found) {
            return;
        }
        if (auto info = defined(elf, "MPI2DD_info")) {
            file_interface f;
            f.module = path;
            auto bytes = elf.read_bytes(info->value + MPI2DD_INFO_OFF_MPI_FLAGS, 4);
            if (bytes.size() == 4) {   // else in .bss: all zero
                std::memcpy(&f.initial_mpi_flags, bytes.data(), 4);
            }
            found = f;
        }
    };
    try {
        auto elf = open(program);
        look(*elf, program);
        if (!found || !breakpoint) {
            auto names = read_dynamic(*elf);
            auto dirs = search_dirs(names, fs::absolute(program).parent_path());
            for (const auto& lib : names.needed) {
                auto path = find_library(lib, dirs);
                if (!path) {
                    continue;
                }
                try {
                    auto lib_elf = open(*path);
                    if (exports_name(*lib_elf, "MPI2DD_")) {
                        look(*lib_elf, *path);
                    }
                } catch (const error& e) {
                    log::write(log::channel::ptrace, "MPI2DD: {}: {}", path->string(), e.what());
                }
            }
        }
    } catch (const error& e) {
        log::write(log::channel::ptrace, "MPI2DD: {}: {}", program.string(), e.what());
        return std::nullopt;
    }
    if (found) {
        found->has_breakpoint = breakpoint;
    }
    return found;
}

}  // namespace ompdbg::tracer::mpi2dd
