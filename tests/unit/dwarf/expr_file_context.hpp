#pragma once
// An eval_context over an ELF file on disk, for comparing the evaluator and formatter with
// gdb's answers on the same binary without running it (gdb reads static data from the
// file too). Memory comes from the allocated sections (file bytes, zeros for .bss);
// writes go to an overlay. Variables, functions and types come from libdwarfview's
// debug_info (find_global + evaluate_location, find_functions, find_type), enumerators
// from enumerator_index, symbols from .symtab (named the way gdb names C++ functions).

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/location.hpp"
#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::test {

class file_eval_context : public dwarf::eval_context {
public:
    explicit file_eval_context(const std::string& path) {
        elf_version(EV_CURRENT);
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) {
            throw std::runtime_error("cannot open " + path);
        }
        elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
        dwarf_ = dwarf_begin_elf(elf_, DWARF_C_READ, nullptr);
        if (!elf_ || !dwarf_) {
            throw std::runtime_error("no DWARF in " + path);
        }
        load_segments();
        load_symbols();
        index_dwarf();
        file_ = dwarf::elf_file::open(path);
        dbg_ = file_->debug();
        if (!dbg_) {
            throw std::runtime_error("no debug_info for " + path);
        }
        enumerators_ = std::make_unique<dwarf::enumerator_index>(dwarf_);
    }
    ~file_eval_context() override {
        enumerators_.reset();
        if (dwarf_) {
            dwarf_end(dwarf_);
        }
        if (elf_) {
            elf_end(elf_);
        }
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    file_eval_context(const file_eval_context&) = delete;
    file_eval_context& operator=(const file_eval_context&) = delete;

    std::optional<dwarf::value> lookup_variable(std::string_view name) override {
        auto var = dbg_->find_global(name);
        if (!var) {
            return std::nullopt;
        }
        dwarf::value v;
        v.val_type = var->var_type;
        auto loc = dwarf::evaluate_location(*var, locations_);
        if (auto* mem = std::get_if<dwarf::location::memory>(&loc.value)) {
            v.address = mem->addr;
        } else {
            v.optimized_out = true;
        }
        return v;
    }
    std::optional<dwarf::value> lookup_function(std::string_view name) override {
        for (auto& fn : dbg_->find_functions(name)) {
            if (fn.is_inlined) {
                continue;
            }
            dwarf::value v;
            v.val_type = dwarf::type(fn.die);
            v.address = fn.entry_pc;
            return v;
        }
        return std::nullopt;
    }
    std::optional<dwarf::type> lookup_type(std::string_view name) override { return dbg_->find_type(name); }
    std::optional<dwarf::value> lookup_enumerator(std::string_view name) override {
        return enumerators_->find(name);
    }
    std::optional<std::uint64_t> read_register(std::string_view) override { return std::nullopt; }
    void write_register(std::string_view, std::uint64_t) override { error::send("No registers."); }
    std::optional<std::uint64_t> read_dwarf_register(int) override { return std::nullopt; }

    void read_memory(std::uint64_t addr, std::span<std::byte> out) override {
        for (std::size_t i = 0; i < out.size(); ++i) {
            std::uint64_t a = addr + i;
            if (auto w = overlay_.find(a); w != overlay_.end()) {
                out[i] = w->second;
                continue;
            }
            bool found = false;
            for (auto& seg : segments_) {
                if (a >= seg.vaddr && a < seg.vaddr + seg.memsz) {
                    std::uint64_t off = a - seg.vaddr;
                    out[i] = off < seg.filesz ? std::byte{static_cast<unsigned char>(image_[seg.offset + off])}
                                              : std::byte{0};
                    found = true;
                    break;
                }
            }
            if (!found) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "Cannot access memory at address 0x%llx",
                              static_cast<unsigned long long>(a));
                error::send(buf);
            }
        }
    }
    void write_memory(std::uint64_t addr, std::span<const std::byte> data) override {
        std::vector<std::byte> probe(data.size());
        read_memory(addr, probe);  // same failures as a read
        for (std::size_t i = 0; i < data.size(); ++i) {
            overlay_[addr + i] = data[i];
        }
    }

    // gdb's msymbol lookup: the sized symbol containing `addr`, or a preceding
    // zero-sized one; "<name+off>".
    std::string symbolize(std::uint64_t addr) override {
        const sym* best = nullptr;
        for (auto& s : syms_) {
            if (s.addr > addr) {
                break;
            }
            if (s.size ? addr < s.addr + s.size : true) {
                if (!best || s.addr >= best->addr) {
                    best = &s;
                }
            }
        }
        if (!best || (best->size == 0 && addr != best->addr)) {
            return "";
        }
        std::string name = best->name;
        if (auto it = cxx_names_.find(best->addr); it != cxx_names_.end()) {
            name = it->second;
        }
        std::string out = "<" + name;
        if (addr != best->addr) {
            out += "+" + std::to_string(addr - best->addr);
        }
        return out + ">";
    }

    std::optional<dwarf::value> history(int index) override {
        int n = static_cast<int>(history_.size());
        int abs = index > 0 ? index : n + index;
        if (abs <= 0 || abs > n) {
            return std::nullopt;
        }
        return history_[static_cast<std::size_t>(abs - 1)];
    }
    int history_size() override { return static_cast<int>(history_.size()); }
    void record(const dwarf::value& v) { history_.push_back(v); }

    std::optional<dwarf::value> convenience(std::string_view name) override {
        auto it = conv_.find(std::string(name));
        if (it == conv_.end()) {
            return std::nullopt;
        }
        return it->second;
    }
    void set_convenience(std::string_view name, const dwarf::value& v) override { conv_[std::string(name)] = v; }
    bool language_cplus() override { return cplus_; }

private:
    // Static data needs no frame: no registers, no CFA, no TLS, no load bias.
    class file_locations : public dwarf::location_context {
    public:
        explicit file_locations(file_eval_context& owner) : owner_(owner) {}
        std::uint64_t pc() const override { return 0; }
        std::uint64_t load_bias() const override { return 0; }
        std::optional<std::uint64_t> read_register(int) const override { return std::nullopt; }
        void read_memory(std::uint64_t addr, std::span<std::byte> out) const override {
            owner_.read_memory(addr, out);
        }
        std::optional<std::uint64_t> cfa() const override { return std::nullopt; }
        std::optional<std::uint64_t> tls_address(std::uint64_t) const override { return std::nullopt; }

    private:
        file_eval_context& owner_;
    };

    struct segment {
        std::uint64_t vaddr, memsz, filesz, offset;
    };
    struct sym {
        std::uint64_t addr, size;
        std::string name;
    };

    // Like gdb without a process: only SHF_ALLOC sections are memory (.bss reads as zeros);
    // the ELF header and gaps between sections are not.
    void load_segments() {
        std::size_t n = 0;
        char* raw = elf_rawfile(elf_, &n);
        image_.assign(raw, raw + n);
        Elf_Scn* scn = nullptr;
        while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0) {
                continue;
            }
            std::uint64_t filesz = sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size;
            segments_.push_back({sh.sh_addr, sh.sh_size, filesz, sh.sh_offset});
        }
    }

    void load_symbols() {
        Elf_Scn* scn = nullptr;
        while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
            GElf_Shdr sh;
            gelf_getshdr(scn, &sh);
            if (sh.sh_type != SHT_SYMTAB) {
                continue;
            }
            Elf_Data* data = elf_getdata(scn, nullptr);
            std::size_t count = sh.sh_size / sh.sh_entsize;
            for (std::size_t i = 0; i < count; ++i) {
                GElf_Sym s;
                gelf_getsym(data, static_cast<int>(i), &s);
                int t = GELF_ST_TYPE(s.st_info);
                if ((t != STT_FUNC && t != STT_OBJECT) || s.st_value == 0) {
                    continue;
                }
                const char* name = elf_strptr(elf_, sh.sh_link, s.st_name);
                if (!name || !*name) {
                    continue;
                }
                std::string n = name;
                int status = 0;
                char* dem = abi::__cxa_demangle(name, nullptr, nullptr, &status);
                if (status == 0 && dem) {
                    n = dem;
                }
                std::free(dem);
                syms_.push_back({s.st_value, s.st_size, n});
            }
        }
        std::sort(syms_.begin(), syms_.end(), [](const sym& a, const sym& b) { return a.addr < b.addr; });
    }

    static std::string name_of(Dwarf_Die& d) {
        const char* n = dwarf_diename(&d);
        return n ? n : "";
    }

    void index_dwarf() {
        Dwarf_Off off = 0;
        Dwarf_Off next = 0;
        std::size_t hsize = 0;
        while (dwarf_nextcu(dwarf_, off, &next, &hsize, nullptr, nullptr, nullptr) == 0) {
            Dwarf_Die cu;
            if (dwarf_offdie(dwarf_, off + hsize, &cu)) {
                int lang = dwarf_srclang(&cu);
                if (lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_11 ||
                    lang == DW_LANG_C_plus_plus_14 || lang == DW_LANG_C_plus_plus_03) {
                    cplus_ = true;
                }
                walk(cu, "");
            }
            off = next;
        }

    }

    // C++ function names as gdb prints them in <...>: the DWARF name with parameter types.
    void walk(Dwarf_Die& parent, const std::string& scope) {
        Dwarf_Die child;
        if (dwarf_child(&parent, &child) != 0) {
            return;
        }
        do {
            int tag = dwarf_tag(&child);
            std::string name = name_of(child);
            if (tag == DW_TAG_namespace) {
                walk(child, scope + (name.empty() ? "(anonymous namespace)" : name) + "::");
            } else if (tag == DW_TAG_subprogram && cplus_ && !name.empty()) {
                Dwarf_Addr low = 0;
                if (dwarf_lowpc(&child, &low) == 0) {
                    std::string print = scope + name + "(";
                    auto params = dwarf::type(child).parameters();
                    for (std::size_t i = 0; i < params.size(); ++i) {
                        print += (i ? ", " : "") + params[i].name();
                    }
                    cxx_names_[low] = print + ")";
                }
            }
        } while (dwarf_siblingof(&child, &child) == 0);
    }

    std::unique_ptr<dwarf::elf_file> file_;
    dwarf::debug_info* dbg_ = nullptr;
    file_locations locations_{*this};
    int fd_ = -1;
    Elf* elf_ = nullptr;
    Dwarf* dwarf_ = nullptr;
    std::string image_;
    std::vector<segment> segments_;
    std::vector<sym> syms_;
    std::unique_ptr<dwarf::enumerator_index> enumerators_;
    std::map<std::uint64_t, std::string> cxx_names_;
    std::map<std::uint64_t, std::byte> overlay_;
    std::vector<dwarf::value> history_;
    std::map<std::string, dwarf::value> conv_;
    bool cplus_ = false;
};

/// What gdb prints for each command, run once in batch mode on `program` (no .gdbinit,
/// C locale, bounded by `timeout`). Commands go as separate -ex arguments so that an
/// error in one does not stop the others. One entry per command: its output lines joined
/// by '\n', with the "$N = " history prefix removed.
/// `pre` commands run first, unanswered (e.g. "break main", "run").
inline std::vector<std::string> gdb_answers(const std::string& program, const std::vector<std::string>& commands,
                                            const std::vector<std::string>& pre = {}) {
    std::vector<std::string> args = {"/usr/bin/timeout", "120", "gdb", "-nx", "-batch"};
    for (auto& p : pre) {
        args.push_back("-ex");
        args.push_back(p);
    }
    for (std::size_t i = 0; i < commands.size(); ++i) {
        args.push_back("-ex");
        args.push_back("echo @@" + std::to_string(i) + "@@\\n");
        args.push_back("-ex");
        args.push_back(commands[i]);
    }
    args.push_back("-ex");
    args.push_back("echo @@end@@\\n");
    args.push_back(program);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe");
    }
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        ::setenv("LC_ALL", "C", 1);
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::vector<std::string> answers(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) {
        std::string start = "@@" + std::to_string(i) + "@@\n";
        std::string stop = i + 1 < commands.size() ? "@@" + std::to_string(i + 1) + "@@\n" : "@@end@@\n";
        auto a = out.find(start);
        auto b = out.find(stop);
        if (a == std::string::npos || b == std::string::npos) {
            answers[i] = "<gdb gave no answer>";
            continue;
        }
        std::string text = out.substr(a + start.size(), b - a - start.size());
        while (!text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        if (text.size() > 1 && text[0] == '$') {
            auto eq = text.find(" = ");
            if (eq != std::string::npos && text.find_first_not_of("0123456789", 1) == eq) {
                text = text.substr(eq + 3);
            }
        }
        answers[i] = text;
    }
    return answers;
}

/// Our answer for one gdb command ("print/x EXPR", "ptype T", "whatis E", "set var ...",
/// "output E"), in the same shape as gdb_answers.
inline std::string our_answer(file_eval_context& ctx, const std::string& command) {
    try {
        std::string cmd = command;
        std::string args;
        auto sp = cmd.find(' ');
        if (sp != std::string::npos) {
            args = cmd.substr(sp + 1);
            cmd = cmd.substr(0, sp);
        }
        dwarf::format_options opts;
        auto slash = cmd.find('/');
        if (slash != std::string::npos) {
            for (char c : cmd.substr(slash + 1)) {
                opts.letter = dwarf::parse_format_letter(c).value();
            }
            cmd = cmd.substr(0, slash);
        }
        if (cmd == "print" || cmd == "p") {
            auto v = dwarf::evaluate(args, ctx);
            std::string text = dwarf::format_value(v, ctx, opts);
            ctx.record(v);
            return text;
        }
        if (cmd == "ptype") {
            return dwarf::ptype_command(args, ctx);
        }
        if (cmd == "whatis") {
            return dwarf::whatis_command(args, ctx);
        }
        if (cmd == "set") {
            // "set var X = V"
            dwarf::evaluate(args.substr(args.find(' ') + 1), ctx);
            return "";
        }
        return "unknown test command " + cmd;
    } catch (const ompdbg::error& e) {
        return e.what();
    }
}

}  // namespace ompdbg::test
