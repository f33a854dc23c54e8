// write_core_file: an ELF core of a live process, laid out as linux/fs/binfmt_elf.c writes
// one (ELF header, program headers with the PT_NOTE first, notes, then page-aligned
// PT_LOAD contents), so that core_file and gdb read it as they read a kernel core.

#include "ompdbg/tracer/core_writer.hpp"

#include <cpuid.h>
#include <elf.h>
#include <sys/procfs.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "internal/proc_fs.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/process.hpp"

namespace ompdbg::tracer {

namespace {

constexpr std::uint64_t page_size = 4096;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) & ~(a - 1); }

/// The notes segment, built in memory (it is small: a few KB per thread).
class note_writer {
public:
    template <typename T>
    void add(const char* name, std::uint32_t type, const T& desc) {
        add_bytes(name, type, std::as_bytes(std::span(&desc, 1)));
    }
    void add_bytes(const char* name, std::uint32_t type, std::span<const std::byte> desc) {
        Elf64_Nhdr nh{};
        nh.n_namesz = static_cast<Elf64_Word>(std::strlen(name) + 1);
        nh.n_descsz = static_cast<Elf64_Word>(desc.size());
        nh.n_type = type;
        append(std::as_bytes(std::span(&nh, 1)));
        append(std::as_bytes(std::span(name, nh.n_namesz)));
        pad();
        append(desc);
        pad();
    }
    const std::vector<std::byte>& bytes() const { return buf_; }

private:
    void append(std::span<const std::byte> b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
    void pad() { buf_.resize(align_up(buf_.size(), 4)); }
    std::vector<std::byte> buf_;
};

/// The thread's XSAVE area for the NT_X86_XSTATE note, in the layout Intel CPUs give it
/// (the one gdb assumes in a core: it takes XCR0 from the software-reserved bytes and the
/// layout from the note size), or empty when the kernel has none. PTRACE_GETREGSET gives
/// this CPU's standard format, whose offsets (CPUID leaf 0xD) differ on AMD CPUs with
/// AVX-512: each component is moved to Intel's offset. Without the note gdb shows only
/// the xmm halves of ymm/zmm.
std::vector<std::byte> xsave_area(pid_t tid) {
    // The largest XSAVE layouts (AMX tiles) are about 11 KB; the kernel trims iov_len.
    std::vector<std::byte> area(32 * 1024);
    iovec iov{area.data(), area.size()};
    if (!internal::try_ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) ||
        iov.iov_len < 576) {
        return {};
    }
    area.resize(iov.iov_len);
    std::uint64_t xcr0 = 0;
    std::memcpy(&xcr0, area.data() + 464, sizeof xcr0);   // sw_reserved: xstate_fx_sw_bytes
    // Intel's offsets of the components gdb knows: AVX, MPX (2), AVX-512 (3), PKRU.
    struct component {
        int bit;
        std::size_t offset, size;
    };
    static constexpr component intel[] = {{2, 576, 256},  {3, 960, 64},    {4, 1024, 64},
                                           {5, 1088, 64},  {6, 1152, 512},  {7, 1664, 1024},
                                           {9, 2688, 8}};
    std::size_t size = 576;
    for (const auto& c : intel) {
        if (xcr0 & (std::uint64_t{1} << c.bit)) {
            size = std::max(size, c.offset + c.size);
        }
    }
    std::vector<std::byte> out(size);
    std::memcpy(out.data(), area.data(), 576);   // legacy area and XSAVE header
    for (const auto& c : intel) {
        if (!(xcr0 & (std::uint64_t{1} << c.bit))) {
            continue;
        }
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        __cpuid_count(0xd, c.bit, eax, ebx, ecx, edx);
        if (eax == c.size && ebx + eax <= area.size()) {
            std::memcpy(out.data() + c.offset, area.data() + ebx, c.size);
        }
    }
    return out;
}

/// Fields 4-6 of /proc/PID/stat: ppid, pgrp, session.
void parent_and_group(pid_t pid, pid_t& ppid, pid_t& pgrp, pid_t& sid) {
    std::string stat = internal::read_small_file(fmt::format("/proc/{}/stat", pid));
    auto close = stat.rfind(')');
    ppid = pgrp = sid = 0;
    if (close == std::string::npos) {
        return;
    }
    std::istringstream in(stat.substr(close + 1));
    std::string state;
    in >> state >> ppid >> pgrp >> sid;
}

/// The NT_FILE note: count, page size, {start, end, file offset in pages} per mapping, then
/// the names (binfmt_elf.c fill_files_note).
std::vector<std::byte> file_note(const std::vector<internal::map_entry>& maps) {
    std::vector<std::uint64_t> words;
    std::string names;
    std::uint64_t count = 0;
    for (const auto& m : maps) {
        if (m.path.empty() || m.path.front() != '/') {
            continue;
        }
        ++count;
        words.push_back(m.start);
        words.push_back(m.end);
        words.push_back(m.offset / page_size);
        names += m.path;
        names.push_back('\0');
    }
    std::vector<std::uint64_t> head{count, page_size};
    std::vector<std::byte> out;
    auto put = [&](std::span<const std::byte> b) { out.insert(out.end(), b.begin(), b.end()); };
    put(std::as_bytes(std::span(head)));
    put(std::as_bytes(std::span(words)));
    put(std::as_bytes(std::span(names.data(), names.size())));
    return out;
}

/// How many bytes of mapping `m` go into the core (see write_core_file).
std::uint64_t dumped_size(const internal::map_entry& m, process& p) {
    if (m.perms.empty() || m.perms[0] != 'r' || m.path == "[vvar]" || m.path == "[vsyscall]") {
        return 0;
    }
    bool file_backed = !m.path.empty() && m.path.front() == '/';
    bool writable = m.perms.size() > 1 && m.perms[1] == 'w';
    bool executable = m.perms.size() > 2 && m.perms[2] == 'x';
    // Read-only data of a file may differ from the file: the RELRO part (GOT, relocated
    // pointers) was written before it was made read-only. The kernel dumps such written
    // private pages; here every non-executable one is copied (they are small). Code is
    // read from the file (ompdbg's int3s are not in it).
    if (!file_backed || writable || !executable) {
        return m.end - m.start;
    }
    if (m.offset == 0) {
        unsigned char ident[SELFMAG] = {};
        if (p.try_read_memory(virt_addr(m.start), std::as_writable_bytes(std::span(ident))) == SELFMAG &&
            std::memcmp(ident, ELFMAG, SELFMAG) == 0) {
            return page_size;
        }
    }
    return 0;
}

}  // namespace

void write_core_file(process& p, const std::filesystem::path& path, pid_t first_tid, int signo) {
    const pid_t pid = p.pid();
    auto maps = internal::read_maps(pid);
    pid_t ppid = 0, pgrp = 0, sid = 0;
    parent_and_group(pid, ppid, pgrp, sid);

    // Threads, the one that "dumped" first (gdb reports its signal and selects it).
    std::vector<thread*> threads = p.threads();
    std::stable_partition(threads.begin(), threads.end(), [&](thread* t) { return t->tid() == first_tid; });

    note_writer notes;
    elf_prpsinfo ps{};
    ps.pr_sname = 't';   // traced (stopped by us)
    ps.pr_pid = pid;
    ps.pr_ppid = ppid;
    ps.pr_pgrp = pgrp;
    ps.pr_sid = sid;
    ps.pr_uid = ::getuid();
    ps.pr_gid = ::getgid();
    std::string comm = internal::thread_comm(pid, pid);
    std::strncpy(ps.pr_fname, comm.c_str(), sizeof ps.pr_fname - 1);
    std::string cmdline = internal::read_small_file(fmt::format("/proc/{}/cmdline", pid));
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    while (!cmdline.empty() && cmdline.back() == ' ') {
        cmdline.pop_back();
    }
    std::strncpy(ps.pr_psargs, cmdline.c_str(), sizeof ps.pr_psargs - 1);

    bool first = true;
    for (thread* t : threads) {
        const registers& r = t->regs();
        elf_prstatus prs{};
        prs.pr_pid = t->tid();
        prs.pr_ppid = ppid;
        prs.pr_pgrp = pgrp;
        prs.pr_sid = sid;
        // Every thread carries the signal, as in the kernel's cores (BFD keeps the last one).
        prs.pr_cursig = static_cast<short>(signo);
        prs.pr_info.si_signo = signo;
        static_assert(sizeof(prs.pr_reg) == sizeof(user_regs_struct));
        std::memcpy(&prs.pr_reg, &r.gp(), sizeof(user_regs_struct));
        prs.pr_fpvalid = 1;
        notes.add("CORE", NT_PRSTATUS, prs);
        if (first) {
            // The kernel's order for the dumping thread: PRPSINFO, SIGINFO, AUXV, FILE.
            notes.add("CORE", NT_PRPSINFO, ps);
            if (auto si = p.last_siginfo(t->tid()); si && signo != 0) {
                notes.add("CORE", NT_SIGINFO, *si);
            }
            std::string auxv = internal::read_small_file(fmt::format("/proc/{}/auxv", pid));
            notes.add_bytes("CORE", NT_AUXV, std::as_bytes(std::span(auxv.data(), auxv.size())));
            auto files = file_note(maps);
            notes.add_bytes("CORE", NT_FILE, files);
        }
        notes.add("CORE", NT_FPREGSET, r.fp_regs());
        if (auto xs = xsave_area(t->tid()); !xs.empty()) {
            notes.add_bytes("LINUX", NT_X86_XSTATE, xs);
        }
        first = false;
    }

    // Layout: headers, notes, then each PT_LOAD's bytes at a page-aligned offset.
    std::vector<Elf64_Phdr> phdrs;
    Elf64_Phdr note_ph{};
    note_ph.p_type = PT_NOTE;
    note_ph.p_offset = sizeof(Elf64_Ehdr) + (maps.size() + 1) * sizeof(Elf64_Phdr);
    note_ph.p_filesz = notes.bytes().size();
    note_ph.p_align = 4;
    phdrs.push_back(note_ph);
    std::uint64_t offset = align_up(note_ph.p_offset + note_ph.p_filesz, page_size);
    for (const auto& m : maps) {
        Elf64_Phdr ph{};
        ph.p_type = PT_LOAD;
        ph.p_vaddr = m.start;
        ph.p_memsz = m.end - m.start;
        ph.p_filesz = dumped_size(m, p);
        ph.p_offset = offset;
        ph.p_align = page_size;
        ph.p_flags = (m.perms.size() > 0 && m.perms[0] == 'r' ? PF_R : 0) |
                     (m.perms.size() > 1 && m.perms[1] == 'w' ? PF_W : 0) |
                     (m.perms.size() > 2 && m.perms[2] == 'x' ? PF_X : 0);
        offset += ph.p_filesz;
        phdrs.push_back(ph);
    }

    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
    eh.e_type = ET_CORE;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_phoff = sizeof(Elf64_Ehdr);
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = static_cast<Elf64_Half>(phdrs.size());

    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) {
        error::send(fmt::format("Failed to open '{}' for output.", path.string()));
    }
    out.write(reinterpret_cast<const char*>(&eh), sizeof eh);
    out.write(reinterpret_cast<const char*>(phdrs.data()), static_cast<std::streamsize>(phdrs.size() * sizeof(Elf64_Phdr)));
    out.write(reinterpret_cast<const char*>(notes.bytes().data()), static_cast<std::streamsize>(notes.bytes().size()));
    std::vector<std::byte> chunk(1 << 20);
    for (const auto& ph : phdrs) {
        if (ph.p_type != PT_LOAD || ph.p_filesz == 0) {
            continue;
        }
        out.seekp(static_cast<std::streamoff>(ph.p_offset));
        for (std::uint64_t done = 0; done < ph.p_filesz;) {
            std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), ph.p_filesz - done));
            std::span<std::byte> part(chunk.data(), n);
            std::size_t got = p.try_read_memory(virt_addr(ph.p_vaddr + done), part);
            // Past an unreadable page (a file mapping beyond the end of its file): page by
            // page, zeros where nothing can be read.
            for (std::size_t at = got; at < n;) {
                std::size_t len = std::min<std::size_t>(page_size - (ph.p_vaddr + done + at) % page_size, n - at);
                auto piece = part.subspan(at, len);
                std::size_t ok = p.try_read_memory(virt_addr(ph.p_vaddr + done + at), piece);
                std::fill(piece.begin() + static_cast<std::ptrdiff_t>(std::min(ok, len)), piece.end(), std::byte{0});
                at += len;
            }
            out.write(reinterpret_cast<const char*>(part.data()), static_cast<std::streamsize>(n));
            done += n;
        }
    }
    out.flush();
    if (!out) {
        error::send(fmt::format("Failed to write core file '{}': {}", path.string(), std::strerror(errno)));
    }
}

}  // namespace ompdbg::tracer
