// The modules of a process on another host (remote_process.hpp): the agent's library list
// (qXfer:libraries-svr4), each file read here when it is the build the host maps (its
// build-id note in memory equals the file's), else fetched through the agent (vFile:,
// remote_files.hpp); and the auxiliary vector and vdso the agent reports.
#include "ompdbg/tracer/remote_process.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "internal/readonly_segments.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/tracer/remote_files.hpp"

namespace ompdbg::tracer {

namespace {

constexpr std::uint64_t page_size = 4096;

}  // namespace

std::uint64_t remote_process::auxv_entry(std::uint64_t type) {
    if (!auxv_ && rsp().supported().xfer_auxv) {
        auxv_ = rsp().auxv(pid_);
    }
    if (!auxv_) {
        return 0;
    }
    for (std::size_t i = 0; i + 16 <= auxv_->size(); i += 16) {
        std::uint64_t k, v;
        std::memcpy(&k, auxv_->data() + i, 8);
        std::memcpy(&v, auxv_->data() + i + 8, 8);
        if (k == type) {
            return v;
        }
    }
    return 0;
}

bool remote_process::same_build_id(const loaded_module& m, bool& compared) {
    compared = false;
    auto note = m.elf->section(".note.gnu.build-id");
    if (!note || note->size == 0 || note->size > 1024) {
        return true;   // nothing to compare: trust the path
    }
    auto local = m.elf->read_bytes(note->addr, note->size);
    std::vector<std::byte> mapped(note->size);
    // Only the note's bytes, not its page: the rest of the page is read-only and comes from
    // the file once the file is known to be the right one.
    auto at = m.to_runtime(note->addr);
    if (auto it = notes_.find(at.addr()); it != notes_.end() && it->second.size() == mapped.size()) {
        mapped = it->second;
    } else if (pages_.count(at.addr() & ~(page_size - 1))
                   ? try_read_memory(at, mapped) != mapped.size()
                   : !alive_ || running_ || rsp().read_memory(pid_, at.addr(), mapped) != mapped.size()) {
        return true;
    }
    compared = true;
    return local == mapped;
}

const std::vector<loaded_module>& remote_process::modules() {
    if (modules_) {
        return *modules_;
    }
    std::vector<loaded_module> mods;
    if (!alive_) {
        return *(modules_ = std::move(mods));
    }
    auto open_elf = [&](const std::filesystem::path& path) -> std::shared_ptr<dwarf::elf_file> {
        try {
            return elves_ ? elves_(path) : std::shared_ptr<dwarf::elf_file>(dwarf::elf_file::open(path));
        } catch (const std::exception& e) {
            log::write(log::channel::ptrace, "{}: not readable here: {}", path.string(), e.what());
            return nullptr;
        }
    };
    // `elf` as m's file when it is the build the host maps (its address range, and the
    // executable's bias from AT_ENTRY, set either way); false, m without a file, otherwise.
    std::vector<std::shared_ptr<dwarf::elf_file>> verified;   // build-id compared equal
    auto use = [&](loaded_module& m, std::shared_ptr<dwarf::elf_file> elf) {
        m.elf = std::move(elf);
        if (!m.elf) {
            return false;
        }
        if (m.is_executable) {
            std::uint64_t entry = auxv_entry(AT_ENTRY);
            m.load_bias = entry ? entry - m.elf->entry() : 0;
        }
        auto [lo, hi] = m.elf->load_range();
        m.start = (lo + m.load_bias) & ~(page_size - 1);
        m.end = (hi + m.load_bias + page_size - 1) & ~(page_size - 1);
        bool compared = false;
        if (!same_build_id(m, compared)) {
            m.elf.reset();   // another file under the same path: reading it would lie
            return false;
        }
        if (compared) {
            verified.push_back(m.elf);
        }
        return true;
    };
    // The file at the host's path here when it is the host's build, else the host's own file
    // fetched through the agent (vFile:, cached by build-id: remote_files.hpp). m.path stays
    // the host's path.
    std::map<std::string, std::shared_ptr<dwarf::elf_file>> here_by_path;
    auto local_file = [&](const std::filesystem::path& path) {
        auto [it, added] = here_by_path.try_emplace(path.string());
        if (added) {
            it->second = open_elf(path);
        }
        return it->second;
    };
    auto find_file = [&](loaded_module& m) {
        auto here = local_file(m.path);
        const bool exists_here = here != nullptr;
        if (use(m, std::move(here))) {
            return;
        }
        log::write(log::channel::ptrace, "{}: {} here: reading the host's", m.path.string(),
                   exists_here ? "another build" : "no such file");
        // Twice at most: a copy kept from before that the process does not map (the host's
        // file changed since) is fetched again.
        for (int attempt = 0; attempt < 2; ++attempt) {
            std::filesystem::path copy;
            try {
                copy = conn_->files().local_copy(rsp(), pid_, m.path);
            } catch (const error& e) {
                log::write(log::channel::ptrace, "{}: not readable through the agent: {}", m.path.string(), e.what());
                return;
            }
            if (use(m, open_elf(copy))) {
                return;
            }
            conn_->files().forget(m.path);
        }
    };
    std::uint64_t main_lm = 0;
    std::vector<rsp::library_entry> libs;
    if (rsp().supported().xfer_libraries_svr4) {
        libs = rsp().libraries(pid_, &main_lm);
    }
    // The build-id notes of every file found here, read in one pipelined batch before they
    // are compared: an Open MPI rank maps about 70 files, a round trip each otherwise.
    std::vector<std::pair<std::uint64_t, std::size_t>> wanted;
    auto want_note = [&](const std::shared_ptr<dwarf::elf_file>& elf, std::uint64_t bias) {
        auto note = elf ? elf->section(".note.gnu.build-id") : std::nullopt;
        if (note && note->size > 0 && note->size <= 1024) {
            wanted.emplace_back(note->addr + bias, note->size);
        }
    };
    if (!exe_.empty()) {
        auto elf = local_file(exe_);
        std::uint64_t entry = auxv_entry(AT_ENTRY);
        want_note(elf, elf && entry ? entry - elf->entry() : 0);
    }
    for (auto& l : libs) {
        if (l.lm != main_lm && !l.name.empty() && l.name[0] == '/') {
            want_note(local_file(l.name), l.l_addr);
        }
    }
    notes_.clear();
    if (!wanted.empty() && !running_) {
        auto got = rsp().read_memory_ranges(pid_, wanted);
        for (std::size_t i = 0; i < wanted.size(); ++i) {
            notes_[wanted[i].first] = std::move(got[i]);
        }
    }
    if (!exe_.empty()) {
        loaded_module m;
        m.path = exe_;
        m.is_executable = true;
        m.link_map_addr = main_lm;
        find_file(m);
        mods.push_back(std::move(m));
    }
    for (auto& l : libs) {
        if (l.lm == main_lm || l.name.empty() || l.name[0] != '/') {
            continue;   // the executable, the vdso ("linux-vdso.so.1")
        }
        loaded_module m;
        m.path = l.name;
        m.load_bias = l.l_addr;
        m.l_ld = l.l_ld;
        m.link_map_addr = l.lm;
        find_file(m);
        mods.push_back(std::move(m));
    }
    // At the first instruction (after `run` or an exec) the dynamic loader has not listed
    // itself yet: it is the program's interpreter (PT_INTERP), mapped at AT_BASE, as gdb's
    // svr4 start-up hook finds it ("_start () from /lib64/ld-linux-x86-64.so.2").
    if (libs.empty() && !mods.empty() && mods.front().elf) {
        auto interp = mods.front().elf->section(".interp");
        std::uint64_t base = auxv_entry(AT_BASE);
        if (interp && base != 0 && interp->size > 1 && interp->size < 4096) {
            auto bytes = mods.front().elf->read_bytes(interp->addr, interp->size);
            std::string path(reinterpret_cast<const char*>(bytes.data()), bytes.size());
            path.resize(std::min(path.size(), path.find('\0')));
            if (path.starts_with("/")) {
                loaded_module m;
                m.path = path;
                m.load_bias = base;
                find_file(m);
                mods.push_back(std::move(m));
            }
        }
    }
    notes_.clear();
    readonly_->clear();
    for (auto& m : mods) {
        if (std::find(verified.begin(), verified.end(), m.elf) != verified.end()) {
            readonly_->add(m);
        }
    }
    return *(modules_ = std::move(mods));
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> remote_process::vdso_range() {
    std::uint64_t base = alive_ ? auxv_entry(AT_SYSINFO_EHDR) : 0;
    if (base == 0) {
        return std::nullopt;
    }
    // The vdso's extent from its own program headers in memory (no /proc/PID/maps here).
    Elf64_Ehdr eh;
    if (try_read_memory(virt_addr(base), std::as_writable_bytes(std::span(&eh, 1))) != sizeof eh ||
        std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_phnum > 64) {
        return std::nullopt;
    }
    std::uint64_t end = 0;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph;
        if (try_read_memory(virt_addr(base + eh.e_phoff + i * sizeof ph), std::as_writable_bytes(std::span(&ph, 1))) !=
            sizeof ph) {
            return std::nullopt;
        }
        if (ph.p_type == PT_LOAD) {
            end = std::max<std::uint64_t>(end, ph.p_vaddr + ph.p_memsz);
        }
    }
    return std::pair(base, base + ((end + page_size - 1) & ~(page_size - 1)));
}

}  // namespace ompdbg::tracer
