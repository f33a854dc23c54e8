// Shared-library tracking through the dynamic loader's debugger interface (<link.h>):
// r_debug is found through the executable's DT_DEBUG (filled by ld.so at start-up), its
// r_brk (`_dl_debug_state`) gets an internal breakpoint, and each hit with r_state ==
// RT_CONSISTENT re-reads the link_map chain. Before ld.so has run (the exec stop), r_brk
// comes from `_dl_debug_state` in ld.so's own symbols, ld.so's base being AT_BASE.

#include "internal/process_impl.hpp"
#include "internal/proc_fs.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <cstring>
#include <filesystem>
#include <string>

#include <elf.h>
#include <link.h>

namespace ompdbg::tracer {

namespace {

// glibc's public prefixes of struct r_debug and struct link_map (x86-64).
struct r_debug_raw {
    std::int32_t r_version;
    std::int32_t pad;
    std::uint64_t r_map;
    std::uint64_t r_brk;
    std::int32_t r_state;
    std::int32_t pad2;
    std::uint64_t r_ldbase;
};
struct link_map_raw {
    std::uint64_t l_addr, l_name, l_ld, l_next, l_prev;
};

// The run-time range mapped from the file that also maps `inside`.
void fill_range(loaded_module& m, const std::vector<internal::map_entry>& maps, std::uint64_t inside) {
    std::string file;
    for (const auto& e : maps) {
        if (inside >= e.start && inside < e.end) {
            file = e.path;
            break;
        }
    }
    if (file.empty() || file.front() == '[') {
        return;
    }
    for (const auto& e : maps) {
        if (e.path == file) {
            m.start = m.start == 0 ? e.start : std::min(m.start, e.start);
            m.end = std::max(m.end, e.end);
        }
    }
}

}  // namespace

void ptrace_process::impl::plant_loader_breakpoint(std::uint64_t addr) {
    if (addr == 0 || addr == r_brk) {
        return;
    }
    if (r_brk != 0) {
        if (auto it = sites.find(r_brk); it != sites.end()) {
            if (--it->second->refcount_ <= 0) {
                if (it->second->is_enabled()) {
                    remove_int3(*it->second);
                }
                sites.erase(it);
            }
        }
    }
    try {
        auto it = sites.find(addr);
        if (it != sites.end()) {
            ++it->second->refcount_;
        } else {
            std::unique_ptr<breakpoint_site> s(new breakpoint_site(next_site_id++, virt_addr(addr), true));
            insert_int3(*s);
            s->enabled_ = true;
            s->refcount_ = 1;
            sites.emplace(addr, std::move(s));
        }
        r_brk = addr;
    } catch (const error& e) {
        log::write(log::channel::ptrace, "cannot plant the loader breakpoint at {:#x}: {}", addr, e.what());
    }
}

std::shared_ptr<dwarf::elf_file> ptrace_process::impl::elf_of(const std::filesystem::path& path) {
    if (path.empty()) {
        return nullptr;
    }
    try {
        if (elves) {
            return elves(path);
        }
        auto& slot = own_elves[path];
        if (!slot) {
            slot = dwarf::elf_file::open(path);
        }
        return slot;
    } catch (const std::exception& e) {
        log::write(log::channel::ptrace, "no ELF file for {}: {}", path.string(), e.what());
        return nullptr;
    }
}

std::optional<std::uint64_t> ptrace_process::impl::loader_symbol(std::string_view name) {
    for (const auto& m : modules) {
        if (m.path == ld_path && m.elf) {
            return defined_symbol_value(*m.elf, name);
        }
    }
    if (auto elf = elf_of(ld_path)) {
        return defined_symbol_value(*elf, name);
    }
    return std::nullopt;
}

void ptrace_process::impl::init_shared_libraries() {
    modules.clear();
    r_debug_addr = 0;
    r_brk = 0;
    exe_path = internal::process_exe(pid);
    const auto auxv = internal::read_auxv(pid);   // one read of /proc/PID/auxv for the three
    auto phdr = internal::auxv_value(auxv, AT_PHDR);
    auto phnum = internal::auxv_value(auxv, AT_PHNUM);
    auto base = internal::auxv_value(auxv, AT_BASE);
    ld_base = base.value_or(0);
    exe_bias = 0;
    exe_dynamic = 0;
    std::string interp;   ///< the executable's PT_INTERP, as it names its loader
    if (phdr && phnum && *phnum < 256) {
        std::vector<Elf64_Phdr> ph(*phnum);
        auto bytes = std::as_writable_bytes(std::span(ph));
        if (cached_read(*phdr, bytes) == bytes.size()) {
            for (const auto& p : ph) {
                if (p.p_type == PT_PHDR) {
                    exe_bias = *phdr - p.p_vaddr;
                }
            }
            for (const auto& p : ph) {
                if (p.p_type == PT_DYNAMIC) {
                    exe_dynamic = exe_bias + p.p_vaddr;
                }
                if (p.p_type == PT_INTERP && p.p_filesz > 1 && p.p_filesz < 4096) {
                    std::string name(p.p_filesz, '\0');
                    auto out = std::as_writable_bytes(std::span(name.data(), name.size()));
                    if (cached_read(exe_bias + p.p_vaddr, out) == out.size()) {
                        interp = name.c_str();   // up to its terminating NUL
                    }
                }
            }
        }
    }
    auto maps = internal::read_maps(pid);
    loaded_module exe;
    exe.path = exe_path;
    exe.load_bias = exe_bias;
    exe.l_ld = exe_dynamic;
    exe.is_executable = true;
    exe.elf = elf_of(exe_path);
    fill_range(exe, maps, phdr.value_or(0));
    modules.push_back(std::move(exe));

    if (ld_base != 0) {
        for (const auto& e : maps) {
            if (ld_base >= e.start && ld_base < e.end) {
                ld_path = e.path;
                break;
            }
        }
        // The map names the loader by its resolved path; gdb (and the link map, once the
        // loader has filled it) by the executable's PT_INTERP, which names the same file.
        std::error_code ec;
        if (!interp.empty() && !ld_path.empty() && std::filesystem::equivalent(interp, ld_path, ec)) {
            ld_path = interp;
        }
    }
    // Attached (or re-initialised after the loader ran): the list is already there.
    if (read_link_map()) {
        return;
    }
    if (!ld_path.empty()) {
        loaded_module ld;
        ld.path = ld_path;
        ld.load_bias = ld_base;
        ld.elf = elf_of(ld_path);
        fill_range(ld, maps, ld_base);
        modules.push_back(std::move(ld));
        if (auto v = loader_symbol("_dl_debug_state")) {
            plant_loader_breakpoint(ld_base + *v);
        }
    }
}

// Reads go through the page cache (the process is stopped): the dynamic section, r_debug,
// the link-map entries and their names lie on a few pages, read once each instead of one
// process_vm_readv per entry and per name (56 at a launch of a program with three
// libraries).
bool ptrace_process::impl::read_link_map() {
    // r_debug: the executable's DT_DEBUG entry, filled by ld.so before its first
    // notification; else ld.so's `_r_debug` symbol.
    std::uint64_t rdebug = 0;
    if (exe_dynamic != 0) {
        for (std::uint64_t a = exe_dynamic;; a += sizeof(Elf64_Dyn)) {
            Elf64_Dyn dyn{};
            auto b = std::as_writable_bytes(std::span(&dyn, 1));
            if (cached_read(a, b) != b.size() || dyn.d_tag == DT_NULL) {
                break;
            }
            if (dyn.d_tag == DT_DEBUG) {
                rdebug = dyn.d_un.d_ptr;
                break;
            }
        }
    }
    if (rdebug == 0 && ld_base != 0 && !ld_path.empty()) {
        if (auto v = loader_symbol("_r_debug")) {
            rdebug = ld_base + *v;
        }
    }
    if (rdebug == 0) {
        return false;
    }
    r_debug_raw rd{};
    auto rb = std::as_writable_bytes(std::span(&rd, 1));
    if (cached_read(rdebug, rb) != rb.size() || rd.r_map == 0) {
        return false;
    }
    r_debug_addr = rdebug;
    plant_loader_breakpoint(rd.r_brk);
    if (rd.r_state != 0 /* RT_CONSISTENT */) {
        return false;
    }
    auto maps = internal::read_maps(pid);
    std::uint64_t vdso_lo = 0, vdso_hi = 0;
    for (const auto& e : maps) {
        if (e.path == "[vdso]") {
            vdso_lo = e.start;
            vdso_hi = e.end;
        }
    }
    std::vector<loaded_module> fresh;
    fresh.push_back(modules.empty() ? loaded_module{} : modules.front());
    std::uint64_t lm = rd.r_map;
    for (int guard = 0; lm != 0 && guard < 100000; ++guard) {
        link_map_raw l{};
        auto lb = std::as_writable_bytes(std::span(&l, 1));
        if (cached_read(lm, lb) != lb.size()) {
            break;
        }
        std::string name;
        if (l.l_name != 0) {
            char buf[4096];
            std::size_t n = cached_read(l.l_name, std::as_writable_bytes(std::span(buf, sizeof buf - 1)));
            buf[n] = 0;
            name = buf;
        }
        bool is_vdso = vdso_hi != 0 && l.l_ld >= vdso_lo && l.l_ld < vdso_hi;
        // The first entry is the executable itself (empty name).
        if (lm == rd.r_map) {
            fresh.front().link_map_addr = lm;
        } else if (!name.empty() && !is_vdso) {
            loaded_module m;
            m.path = name;
            m.load_bias = l.l_addr;
            m.link_map_addr = lm;
            m.l_ld = l.l_ld;
            fill_range(m, maps, l.l_ld);
            fresh.push_back(std::move(m));
        }
        lm = l.l_next;
    }
    // gdb keeps its libraries in the order it first saw them (update_solib_list appends):
    // those known already keep their place (the dynamic loader, known from the start of a
    // launched program, stays first), new ones follow in link-map order.
    {
        // One library per base address (the loader's entry from /proc/PID/maps may spell
        // its path differently from its link-map name).
        auto same = [](const loaded_module& a, const loaded_module& b) {
            return a.load_bias == b.load_bias && (a.path == b.path || a.load_bias != 0);
        };
        std::vector<loaded_module> ordered;
        ordered.push_back(std::move(fresh.front()));
        std::vector<bool> taken(fresh.size(), false);
        for (std::size_t o = 1; o < modules.size(); ++o) {
            for (std::size_t i = 1; i < fresh.size(); ++i) {
                if (!taken[i] && same(modules[o], fresh[i])) {
                    taken[i] = true;
                    ordered.push_back(std::move(fresh[i]));
                    break;
                }
            }
        }
        for (std::size_t i = 1; i < fresh.size(); ++i) {
            if (!taken[i]) {
                ordered.push_back(std::move(fresh[i]));
            }
        }
        fresh = std::move(ordered);
    }
    bool changed = fresh.size() != modules.size();
    for (std::size_t i = 0; !changed && i < fresh.size(); ++i) {
        changed = fresh[i].path != modules[i].path || fresh[i].load_bias != modules[i].load_bias;
    }
    // Keep elf handles of modules that did not change; open the new ones.
    for (auto& f : fresh) {
        for (auto& old : modules) {
            if (old.path == f.path && old.load_bias == f.load_bias && old.elf) {
                f.elf = old.elf;
            }
        }
        if (!f.elf) {
            f.elf = elf_of(f.path);
        }
    }
    modules = std::move(fresh);
    (void)changed;
    return true;
}

bool ptrace_process::impl::on_loader_breakpoint() {
    auto before = modules.size();
    std::vector<std::pair<std::string, std::uint64_t>> old;
    for (auto& m : modules) {
        old.emplace_back(m.path.string(), m.load_bias);
    }
    if (!read_link_map()) {
        return false;
    }
    if (modules.size() != before) {
        return true;
    }
    for (std::size_t i = 0; i < modules.size(); ++i) {
        if (modules[i].path.string() != old[i].first || modules[i].load_bias != old[i].second) {
            return true;
        }
    }
    return false;
}

}  // namespace ompdbg::tracer
