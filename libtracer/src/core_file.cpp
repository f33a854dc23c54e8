// core_file: an ELF core read with pread, no libelf (the notes are few and fixed-layout;
// libelf would refuse a truncated core, which we must still open). Layout of the notes:
// linux/fs/binfmt_elf.c (fill_note_info) and gdb's linux-tdep.c (gcore).

#include "ompdbg/tracer/core_file.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer {

namespace {

/// An fd closed on destruction.
class file_handle {
public:
    file_handle() = default;
    explicit file_handle(int fd) : fd_(fd) {}
    file_handle(const file_handle&) = delete;
    file_handle& operator=(const file_handle&) = delete;
    file_handle(file_handle&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    file_handle& operator=(file_handle&& o) noexcept {
        std::swap(fd_, o.fd_);
        return *this;
    }
    ~file_handle() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }

    /// Reads up to out.size() bytes at `offset`; returns the count.
    std::size_t read_at(std::uint64_t offset, std::span<std::byte> out) const {
        std::size_t done = 0;
        while (done < out.size()) {
            ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
            if (n <= 0) {
                break;
            }
            done += static_cast<std::size_t>(n);
        }
        return done;
    }

private:
    int fd_ = -1;
};

const char* machine_name(int m) {
    switch (m) {
    case EM_386: return "i386";
    case EM_AARCH64: return "aarch64";
    case EM_ARM: return "arm";
    case EM_PPC64: return "powerpc64";
    case EM_RISCV: return "riscv";
    case EM_S390: return "s390";
    default: return nullptr;
    }
}

// glibc's public prefixes of struct r_debug and struct link_map (x86-64).
struct r_debug_raw {
    std::int32_t r_version;
    std::int32_t pad;
    std::uint64_t r_map;
    std::uint64_t r_brk;
};
struct link_map_raw {
    std::uint64_t l_addr, l_name, l_ld, l_next, l_prev;
};

}  // namespace

/// One thread of the core: registers as the kernel saved them.
class core_thread final : public thread {
public:
    core_thread(pid_t tid, registers r) : tid_(tid), regs_(std::move(r)) {}
    pid_t tid() const override { return tid_; }
    std::string name() const override { return {}; }
    thread_state state() const override { return thread_state::stopped; }
    const registers& regs() override { return regs_; }
    void write_regs(const registers&) override { error::send("Cannot write registers of a core file."); }

    user_fpregs_struct& fp() { return regs_.fp_regs(); }

private:
    pid_t tid_;
    registers regs_;
};

struct core_file::impl {
    std::filesystem::path core_path, exe_path;
    file_handle core;
    std::uint64_t core_size = 0;
    std::vector<Elf64_Phdr> loads;                  // PT_LOAD, sorted by vaddr
    std::vector<std::unique_ptr<core_thread>> threads;
    int cursig = 0;
    int si_code = 0;
    std::optional<virt_addr> fault_addr;
    std::string psargs, fname;
    pid_t pid = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> auxv;
    std::vector<core_mapping> mappings;
    std::map<std::string, file_handle> mapped_files;   // opened on first read
    std::vector<std::string> warnings;
    std::vector<loaded_module> modules;
    bool modules_read = false;
    elf_provider elves;

    std::optional<std::uint64_t> aux(std::uint64_t type) const {
        for (auto& [t, v] : auxv) {
            if (t == type) {
                return v;
            }
        }
        return std::nullopt;
    }

    void parse_notes(const Elf64_Phdr& ph);
    void parse_file_note(std::span<const std::byte> desc);
    std::size_t read_one(std::uint64_t addr, std::span<std::byte> out);
    void read_modules();
    void check_executable();
};

core_file::core_file() : impl_(std::make_unique<impl>()) {}
core_file::~core_file() = default;

std::unique_ptr<core_file> core_file::open(const std::filesystem::path& core,
                                           const std::filesystem::path& executable, elf_provider elves) {
    std::unique_ptr<core_file> cf(new core_file());
    impl& d = *cf->impl_;
    d.elves = std::move(elves);
    d.core_path = core;
    d.exe_path = executable;
    d.core = file_handle(::open(core.c_str(), O_RDONLY | O_CLOEXEC));
    if (!d.core.valid()) {
        error::send_errno(core.string());
    }
    struct stat st {};
    if (::fstat(d.core.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        error::send(fmt::format("\"{}\" is not a core dump: file format not recognized", core.string()));
    }
    d.core_size = static_cast<std::uint64_t>(st.st_size);

    Elf64_Ehdr eh{};
    auto eb = std::as_writable_bytes(std::span(&eh, 1));
    std::size_t got = d.core.read_at(0, eb);
    if (got < EI_NIDENT || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        error::send(fmt::format("\"{}\" is not a core dump: file format not recognized", core.string()));
    }
    // Another architecture is named before anything else is checked: its header fields may
    // use another class or byte order.
    std::uint16_t machine = eh.e_machine;
    if (eh.e_ident[EI_DATA] == ELFDATA2MSB) {
        machine = static_cast<std::uint16_t>((machine >> 8) | (machine << 8));
    }
    if (got >= 20 && machine != EM_X86_64) {
        const char* name = machine_name(machine);
        error::send(fmt::format("\"{}\": a core file of another architecture ({}); ompdbg debugs x86-64 cores",
                                core.string(), name ? name : fmt::format("ELF machine {}", machine)));
    }
    if (got < sizeof eh || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
        error::send(fmt::format("\"{}\" is not a core dump: file format not recognized", core.string()));
    }
    if (eh.e_type != ET_CORE) {
        error::send(fmt::format("\"{}\" is not a core dump: file format not recognized", core.string()));
    }
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) {
        error::send(fmt::format("\"{}\": corrupt core file (bad program headers)", core.string()));
    }
    std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
    auto pb = std::as_writable_bytes(std::span(phdrs));
    if (d.core.read_at(eh.e_phoff, pb) != pb.size()) {
        error::send(fmt::format("\"{}\": truncated core file (its program headers are cut off)", core.string()));
    }
    std::uint64_t expected = 0;
    for (const auto& ph : phdrs) {
        expected = std::max(expected, ph.p_offset + ph.p_filesz);
        if (ph.p_type == PT_LOAD) {
            d.loads.push_back(ph);
        } else if (ph.p_type == PT_NOTE) {
            d.parse_notes(ph);
        }
    }
    if (expected > d.core_size) {
        // bfd's wording, which gdb prints.
        d.warnings.push_back(fmt::format("{} is truncated: expected core file size >= {}, found: {}",
                                         core.string(), expected, d.core_size));
    }
    std::sort(d.loads.begin(), d.loads.end(),
              [](const Elf64_Phdr& a, const Elf64_Phdr& b) { return a.p_vaddr < b.p_vaddr; });
    if (d.threads.empty()) {
        error::send(fmt::format("\"{}\": no thread in the core file (no NT_PRSTATUS note)", core.string()));
    }
    d.check_executable();
    return cf;
}

void core_file::impl::parse_notes(const Elf64_Phdr& ph) {
    if (ph.p_filesz > (64u << 20)) {
        warnings.push_back("core file note segment too large; ignored");
        return;
    }
    std::vector<std::byte> buf(ph.p_filesz);
    buf.resize(core.read_at(ph.p_offset, buf));
    std::size_t pos = 0;
    core_thread* last = nullptr;
    auto align4 = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
    while (pos + sizeof(Elf64_Nhdr) <= buf.size()) {
        Elf64_Nhdr nh;
        std::memcpy(&nh, buf.data() + pos, sizeof nh);
        std::size_t name_at = pos + sizeof nh;
        std::size_t desc_at = name_at + align4(nh.n_namesz);
        if (desc_at > buf.size() || nh.n_descsz > buf.size() - desc_at) {
            break;   // truncated note segment: keep what was complete
        }
        std::span<const std::byte> desc(buf.data() + desc_at, nh.n_descsz);
        std::string name(reinterpret_cast<const char*>(buf.data() + name_at),
                         nh.n_namesz ? nh.n_namesz - 1 : 0);
        pos = desc_at + align4(nh.n_descsz);
        if (name != "CORE" && name != "LINUX") {
            continue;
        }
        switch (nh.n_type) {
        case NT_PRSTATUS: {
            if (desc.size() < sizeof(elf_prstatus)) {
                break;
            }
            elf_prstatus prs;
            std::memcpy(&prs, desc.data(), sizeof prs);
            user_regs_struct gp{};
            static_assert(sizeof(gp) == sizeof(prs.pr_reg));
            std::memcpy(&gp, &prs.pr_reg, sizeof gp);
            if (threads.empty()) {
                cursig = prs.pr_cursig;
            }
            threads.push_back(std::make_unique<core_thread>(prs.pr_pid, registers(gp, user_fpregs_struct{})));
            last = threads.back().get();
            break;
        }
        case NT_FPREGSET:
            if (last && desc.size() >= sizeof(user_fpregs_struct)) {
                std::memcpy(&last->fp(), desc.data(), sizeof(user_fpregs_struct));
            }
            break;
        case NT_PRPSINFO:
            if (desc.size() >= sizeof(elf_prpsinfo)) {
                elf_prpsinfo ps;
                std::memcpy(&ps, desc.data(), sizeof ps);
                fname.assign(ps.pr_fname, strnlen(ps.pr_fname, sizeof ps.pr_fname));
                psargs.assign(ps.pr_psargs, strnlen(ps.pr_psargs, sizeof ps.pr_psargs));
                while (!psargs.empty() && psargs.back() == ' ') {
                    psargs.pop_back();
                }
                pid = ps.pr_pid;
            }
            break;
        case NT_SIGINFO:
            // Only the dumping thread's (the first) counts.
            if (desc.size() >= sizeof(siginfo_t) && threads.size() <= 1 && !fault_addr && si_code == 0) {
                siginfo_t si;
                std::memcpy(&si, desc.data(), sizeof si);
                si_code = si.si_code;
                if (si.si_signo == SIGSEGV || si.si_signo == SIGBUS || si.si_signo == SIGFPE ||
                    si.si_signo == SIGILL || si.si_signo == SIGTRAP) {
                    fault_addr = virt_addr(reinterpret_cast<std::uint64_t>(si.si_addr));
                }
            }
            break;
        case NT_AUXV:
            for (std::size_t i = 0; i + 16 <= desc.size(); i += 16) {
                std::uint64_t t, v;
                std::memcpy(&t, desc.data() + i, 8);
                std::memcpy(&v, desc.data() + i + 8, 8);
                if (t == AT_NULL) {
                    break;
                }
                auxv.emplace_back(t, v);
            }
            break;
        case NT_FILE:
            parse_file_note(desc);
            break;
        default:
            break;
        }
    }
    if (pid == 0 && !threads.empty()) {
        pid = threads.front()->tid();
    }
}

// NT_FILE: count, page size, count × {start, end, page offset}, then count NUL-terminated
// names.
void core_file::impl::parse_file_note(std::span<const std::byte> desc) {
    auto word = [&](std::size_t i) {
        std::uint64_t v = 0;
        std::memcpy(&v, desc.data() + i * 8, 8);
        return v;
    };
    if (desc.size() < 16) {
        return;
    }
    std::uint64_t count = word(0), page = word(1);
    if (count > desc.size() / 24) {
        return;
    }
    std::size_t names = (2 + 3 * count) * 8;
    for (std::uint64_t i = 0; i < count && names < desc.size(); ++i) {
        core_mapping m;
        m.start = word(2 + 3 * i);
        m.end = word(3 + 3 * i);
        m.file_offset = word(4 + 3 * i) * page;
        const char* s = reinterpret_cast<const char*>(desc.data() + names);
        std::size_t len = strnlen(s, desc.size() - names);
        m.path.assign(s, len);
        names += len + 1;
        mappings.push_back(std::move(m));
    }
}

// One contiguous read inside one segment or mapping; returns the bytes read (0: none).
std::size_t core_file::impl::read_one(std::uint64_t addr, std::span<std::byte> out) {
    // The core's own bytes first.
    auto it = std::upper_bound(loads.begin(), loads.end(), addr,
                               [](std::uint64_t a, const Elf64_Phdr& p) { return a < p.p_vaddr; });
    if (it != loads.begin()) {
        const Elf64_Phdr& p = *std::prev(it);
        if (addr < p.p_vaddr + p.p_filesz) {
            std::uint64_t off = addr - p.p_vaddr;
            std::size_t n = std::min<std::uint64_t>(out.size(), p.p_filesz - off);
            return core.read_at(p.p_offset + off, out.first(n));
        }
    }
    // Not dumped (read-only file mappings): the mapped file's bytes.
    for (const auto& m : mappings) {
        if (addr < m.start || addr >= m.end) {
            continue;
        }
        auto [fit, inserted] = mapped_files.try_emplace(m.path);
        if (inserted) {
            fit->second = file_handle(::open(m.path.c_str(), O_RDONLY | O_CLOEXEC));
            if (!fit->second.valid()) {
                log::write(log::channel::ptrace, "core: cannot open mapped file {}", m.path);
            }
        }
        if (!fit->second.valid()) {
            return 0;
        }
        std::size_t n = std::min<std::uint64_t>(out.size(), m.end - addr);
        return fit->second.read_at(m.file_offset + (addr - m.start), out.first(n));
    }
    return 0;
}

std::size_t core_file::try_read_memory(virt_addr addr, std::span<std::byte> out) {
    std::size_t done = 0;
    while (done < out.size()) {
        std::size_t n = impl_->read_one(addr.addr() + done, out.subspan(done));
        if (n == 0) {
            break;
        }
        done += n;
    }
    return done;
}

void core_file::read_memory(virt_addr addr, std::span<std::byte> out) {
    std::size_t n = try_read_memory(addr, out);
    if (n != out.size()) {
        error::send(fmt::format("Cannot access memory at address {:#x}", addr.addr() + n));
    }
}

void core_file::write_memory(virt_addr addr, std::span<const std::byte>) {
    error::send(fmt::format("Cannot access memory at address {:#x}", addr.addr()));
}

pid_t core_file::pid() const { return impl_->pid; }
std::filesystem::path core_file::executable() const { return impl_->exe_path; }

std::vector<thread*> core_file::threads() {
    std::vector<thread*> out;
    for (auto& t : impl_->threads) {
        out.push_back(t.get());
    }
    return out;
}

thread* core_file::find_thread(pid_t tid) {
    for (auto& t : impl_->threads) {
        if (t->tid() == tid) {
            return t.get();
        }
    }
    return nullptr;
}

int core_file::signal() const { return impl_->cursig; }
int core_file::si_code() const { return impl_->si_code; }
std::optional<virt_addr> core_file::fault_address() const { return impl_->fault_addr; }
std::string core_file::command_line() const { return impl_->psargs; }
const std::vector<core_mapping>& core_file::mappings() const { return impl_->mappings; }
const std::vector<std::string>& core_file::warnings() const { return impl_->warnings; }

std::optional<std::pair<std::uint64_t, std::uint64_t>> core_file::vdso_range() {
    auto base = impl_->aux(AT_SYSINFO_EHDR);
    if (!base) {
        return std::nullopt;
    }
    for (const auto& p : impl_->loads) {
        if (p.p_vaddr == *base) {
            return std::pair(p.p_vaddr, p.p_vaddr + p.p_memsz);
        }
    }
    return std::nullopt;
}

const std::vector<loaded_module>& core_file::modules() {
    if (!impl_->modules_read) {
        impl_->modules_read = true;
        impl_->read_modules();
        for (auto& m : impl_->modules) {
            if (m.elf || m.path.empty()) {
                continue;
            }
            try {
                m.elf = impl_->elves ? impl_->elves(m.path) : dwarf::elf_file::open(m.path);
            } catch (const std::exception& e) {
                log::write(log::channel::ptrace, "core: no ELF file for {}: {}", m.path.string(), e.what());
            }
        }
    }
    return impl_->modules;
}

// The executable's bias from AT_PHDR, then r_debug (DT_DEBUG) and the link_map chain in
// the core's memory, as for a live process. Without r_debug (static executable, damaged
// core) the ELF files of NT_FILE mapped at offset 0 are listed instead.
void core_file::impl::read_modules() {
    auto read_exact = [&](std::uint64_t addr, void* p, std::size_t n) {
        std::span<std::byte> s(static_cast<std::byte*>(p), n);
        std::size_t done = 0;
        while (done < n) {
            std::size_t k = read_one(addr + done, s.subspan(done));
            if (k == 0) {
                return false;
            }
            done += k;
        }
        return true;
    };
    auto range_of = [&](loaded_module& m, const std::string& path) {
        for (const auto& mp : mappings) {
            if (mp.path == path) {
                m.start = m.start == 0 ? mp.start : std::min(m.start, mp.start);
                m.end = std::max(m.end, mp.end);
            }
        }
    };
    auto file_at = [&](std::uint64_t addr) -> std::string {
        for (const auto& mp : mappings) {
            if (addr >= mp.start && addr < mp.end) {
                return mp.path;
            }
        }
        return {};
    };

    loaded_module exe;
    exe.path = exe_path;
    exe.is_executable = true;
    std::uint64_t dynamic = 0;
    auto phdr = aux(AT_PHDR);
    auto phnum = aux(AT_PHNUM);
    if (phdr && phnum && *phnum < 256) {
        std::vector<Elf64_Phdr> ph(*phnum);
        if (read_exact(*phdr, ph.data(), ph.size() * sizeof(Elf64_Phdr))) {
            for (const auto& p : ph) {
                if (p.p_type == PT_PHDR) {
                    exe.load_bias = *phdr - p.p_vaddr;
                }
            }
            for (const auto& p : ph) {
                if (p.p_type == PT_DYNAMIC) {
                    dynamic = exe.load_bias + p.p_vaddr;
                }
            }
        }
        exe.l_ld = dynamic;
        std::string exe_file = file_at(*phdr);
        if (!exe_file.empty()) {
            range_of(exe, exe_file);
        }
    }
    modules.push_back(exe);

    std::uint64_t rdebug = 0;
    for (std::uint64_t a = dynamic; a != 0; a += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn{};
        if (!read_exact(a, &dyn, sizeof dyn) || dyn.d_tag == DT_NULL) {
            break;
        }
        if (dyn.d_tag == DT_DEBUG) {
            rdebug = dyn.d_un.d_ptr;
            break;
        }
    }
    r_debug_raw rd{};
    auto vdso = aux(AT_SYSINFO_EHDR).value_or(0);
    if (rdebug != 0 && read_exact(rdebug, &rd, sizeof rd) && rd.r_map != 0) {
        std::uint64_t lm = rd.r_map;
        for (int guard = 0; lm != 0 && guard < 10000; ++guard) {
            link_map_raw l{};
            if (!read_exact(lm, &l, sizeof l)) {
                break;
            }
            std::string name;
            if (l.l_name != 0) {
                char buf[4096];
                std::size_t n = 0;
                while (n + 1 < sizeof buf && read_exact(l.l_name + n, buf + n, 1) && buf[n] != 0) {
                    ++n;
                }
                name.assign(buf, n);
            }
            std::string mapped = file_at(l.l_ld);
            bool is_vdso = vdso != 0 && mapped.empty() && l.l_addr == vdso;
            if (lm == rd.r_map) {
                modules.front().link_map_addr = lm;
            } else if (!name.empty() && !is_vdso) {
                loaded_module m;
                m.path = name;
                m.load_bias = l.l_addr;
                m.link_map_addr = lm;
                m.l_ld = l.l_ld;
                range_of(m, mapped.empty() ? name : mapped);
                modules.push_back(std::move(m));
            }
            lm = l.l_next;
        }
        return;
    }
    // No r_debug: every other ELF file mapped from offset 0, biased by its first mapping.
    log::write(log::channel::ptrace, "core: no r_debug; modules from NT_FILE");
    for (const auto& mp : mappings) {
        if (mp.file_offset != 0 || mp.start == modules.front().start) {
            continue;
        }
        bool seen = false;
        for (auto& m : modules) {
            seen = seen || m.path == mp.path;
        }
        Elf64_Ehdr eh{};
        if (seen || !read_exact(mp.start, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
            eh.e_type != ET_DYN) {
            continue;
        }
        loaded_module m;
        m.path = mp.path;
        m.load_bias = mp.start;   // shared objects link their first segment at 0
        range_of(m, mp.path);
        modules.push_back(std::move(m));
    }
}

// gdb warns "core file may not match specified executable file" when the build-id in the
// core's copy of the executable's first page differs from the file's (or, without build-ids,
// when the command name differs).
void core_file::impl::check_executable() {
    std::string exe_name = exe_path.filename().string();
    auto mismatch = [&] {
        warnings.push_back("core file may not match specified executable file.");
    };
    // The executable's ELF header in the core: the NT_FILE mapping that holds AT_PHDR.
    auto phdr = aux(AT_PHDR);
    const core_mapping* exe_map = nullptr;
    if (phdr) {
        for (const auto& m : mappings) {
            if (*phdr >= m.start && *phdr < m.end && m.file_offset == 0) {
                exe_map = &m;
            }
        }
        if (!exe_map) {
            for (const auto& m : mappings) {
                if (m.file_offset == 0 && m.start <= *phdr && (!exe_map || m.start > exe_map->start)) {
                    exe_map = &m;
                }
            }
        }
    }
    // Compare the executable's own program headers (from the file) with the core's copy of
    // the bytes at AT_PHDR: a different program has a different layout or contents.
    file_handle exe(::open(exe_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!exe.valid()) {
        return;
    }
    Elf64_Ehdr eh{};
    if (exe.read_at(0, std::as_writable_bytes(std::span(&eh, 1))) != sizeof eh ||
        std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
        return;
    }
    if (exe_map && phdr) {
        // The file's first page against the core's copy of it: the ELF header and program
        // headers (and usually the build-id note) are there.
        std::vector<std::byte> file_page(4096), core_page(4096);
        std::size_t fn = exe.read_at(0, file_page);
        std::size_t cn = 0;
        auto it = std::upper_bound(loads.begin(), loads.end(), exe_map->start,
                                   [](std::uint64_t a, const Elf64_Phdr& p) { return a < p.p_vaddr; });
        if (it != loads.begin() && std::prev(it)->p_vaddr == exe_map->start && std::prev(it)->p_filesz > 0) {
            const Elf64_Phdr& p = *std::prev(it);
            cn = core.read_at(p.p_offset, std::span(core_page).first(std::min<std::uint64_t>(4096, p.p_filesz)));
        }
        if (cn > 0) {
            std::size_t n = std::min(fn, cn);
            if (std::memcmp(file_page.data(), core_page.data(), n) != 0) {
                mismatch();
            }
            return;
        }
    }
    // No copy of the header in the core: the kernel's command name (15 characters).
    if (!fname.empty() && exe_name.substr(0, 15) != fname) {
        mismatch();
    }
}

}  // namespace ompdbg::tracer
