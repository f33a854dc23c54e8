#include "ompdbg/debugger/eval/frame_context.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <fmt/format.h>

#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/language.hpp"
#include "ompdbg/dwarf/scope_members.hpp"
#include "ompdbg/tracer/thread_db.hpp"

namespace ompdbg::debugger {

namespace {

[[noreturn]] void cannot_access(std::uint64_t addr) {
    error::send(fmt::format("Cannot access memory at address 0x{:x}", addr));
}

}  // namespace

frame_context frame_context::for_selection(session& s) {
    if (s.target() != nullptr && s.selected_tid() != 0) {
        std::size_t level = static_cast<std::size_t>(std::max(0, s.selected_frame()));
        const std::vector<stack_frame>& st = s.innermost_frames(s.selected_tid(), level + 1);
        if (st.empty()) {
            error::send("No frame selected.");
        }
        if (level >= st.size()) {
            level = st.size() - 1;
        }
        return frame_context(s, s.selected_tid(), st[level]);
    }
    if (!s.program()) {
        error::send("No symbol table is loaded.  Use the \"file\" command.");
    }
    return frame_context(s);
}

frame_context::frame_context(session& s, pid_t tid, const stack_frame& frame)
    : s_(s), tid_(tid), frame_(&frame), current_module_(frame.module) {}

frame_context::frame_context(session& s) : s_(s) {
    static_module_ = s.static_executable();
    current_module_ = &static_module_;
}

std::vector<const tracer::loaded_module*> frame_context::search_order() const {
    std::vector<const tracer::loaded_module*> out;
    tracer::target* tgt = s_.target();
    if (frame_ == nullptr || tgt == nullptr) {
        if (static_module_.elf) {
            out.push_back(&static_module_);
        }
        return out;
    }
    if (frame_->module != nullptr) {
        out.push_back(frame_->module);
    }
    for (const tracer::loaded_module& m : tgt->modules()) {
        if (frame_->module == nullptr || m.path != frame_->module->path) {
            out.push_back(&m);
        }
    }
    return out;
}

tracer::registers frame_context::frame_registers() const {
    tracer::target* tgt = s_.target();
    if (frame_ == nullptr || tgt == nullptr) {
        error::send("No registers.");
    }
    tracer::thread* th = tgt->find_thread(tid_);
    if (th == nullptr) {
        error::send("No registers.");
    }
    tracer::registers r = th->regs();
    if (frame_->physical_index == 0) {
        return r;
    }
    // Outer frames: the unwinder's recovered registers laid over frame 0's.
    const auto& dregs = frame_->physical.dwarf_regs;
    for (std::size_t n = 0; n < dregs.size(); ++n) {
        if (!dregs[n]) {
            continue;
        }
        if (auto name = tracer::dwarf_register_name(static_cast<int>(n))) {
            r.write(*name, *dregs[n]);
        }
    }
    r.set_pc(frame_->physical.pc.addr());
    r.write("rsp", frame_->physical.cfa.addr());
    return r;
}

// ---- location_context ----

// Location lists and frame bases are looked up where the frame is *inside* its code: in a
// caller frame the pc is a return address, which may already lie in the next location-list
// range (after a call that does not return, at the end of an inlined range), so gdb looks
// them up at pc - 1 (get_frame_address_in_block); so do we.
std::uint64_t frame_context::pc() const {
    return frame_ != nullptr ? frame_->physical.lookup_pc().addr() : 0;
}

std::uint64_t frame_context::load_bias() const {
    return current_module_ != nullptr ? current_module_->load_bias : 0;
}

std::optional<std::uint64_t> frame_context::read_register(int dwarf_regno) const {
    if (frame_ == nullptr || s_.target() == nullptr) {
        return std::nullopt;
    }
    if (frame_->physical_index == 0) {
        tracer::thread* th = s_.target()->find_thread(tid_);
        if (th == nullptr) {
            return std::nullopt;
        }
        return th->regs().read_dwarf(dwarf_regno);
    }
    if (dwarf_regno == 7) {
        return frame_->physical.cfa.addr();
    }
    if (dwarf_regno == 16) {
        return frame_->physical.pc.addr();
    }
    const auto& dregs = frame_->physical.dwarf_regs;
    if (dwarf_regno < 0 || static_cast<std::size_t>(dwarf_regno) >= dregs.size()) {
        return std::nullopt;
    }
    if (dregs[dwarf_regno]) {
        return dregs[dwarf_regno];
    }
    // A register the caller's CFI does not describe (not callee-saved): gdb's DWARF
    // unwinder takes it as "same value" and shows the inner frame's, for variables, call
    // site values and `info registers` alike; so do we.
    try {
        const std::vector<stack_frame>& frames = s_.stack(tid_);
        for (std::size_t k = frame_->physical_index; k-- > 0;) {
            if (k == 0) {
                tracer::thread* th = s_.target()->find_thread(tid_);
                return th != nullptr ? th->regs().read_dwarf(dwarf_regno) : std::nullopt;
            }
            auto inner = std::find_if(frames.begin(), frames.end(),
                                      [&](const stack_frame& f) { return f.physical_index == k; });
            if (inner == frames.end() || inner->physical.dwarf_regs.size() <= static_cast<std::size_t>(dwarf_regno)) {
                return std::nullopt;
            }
            if (inner->physical.dwarf_regs[dwarf_regno]) {
                return inner->physical.dwarf_regs[dwarf_regno];
            }
        }
    } catch (const ompdbg::error&) {
    }
    return std::nullopt;
}

void frame_context::read_memory(std::uint64_t addr, std::span<std::byte> out) const {
    tracer::target* tgt = s_.target();
    if (frame_ == nullptr || tgt == nullptr) {
        read_static_memory(addr, out);
        return;
    }
    tgt->read_memory(virt_addr(addr), out);
}

std::optional<std::uint64_t> frame_context::cfa() const {
    if (frame_ == nullptr) {
        return std::nullopt;
    }
    return frame_->physical.cfa.addr();
}

std::optional<std::uint64_t> frame_context::tls_address(std::uint64_t offset) const {
    tracer::target* tgt = s_.target();
    if (frame_ == nullptr || tgt == nullptr || current_module_ == nullptr) {
        return std::nullopt;
    }
    std::string why;
    if (auto db = tracer::thread_db::open(*tgt, &why)) {
        return db->tls_address(tid_, *current_module_, offset);
    }
    // Without libthread_db (a program not using pthreads on an old glibc), the executable's
    // own TLS block sits just below the thread pointer (x86-64 TLS variant II).
    if (current_module_->is_executable && current_module_->elf) {
        if (auto seg = current_module_->elf->tls()) {
            tracer::thread* th = tgt->find_thread(tid_);
            auto fs = th != nullptr ? th->regs().read("fs_base") : std::nullopt;
            if (fs) {
                std::uint64_t align = std::max<std::uint64_t>(seg->align, 1);
                std::uint64_t block = (seg->memsz + align - 1) / align * align;
                return *fs - block + offset;
            }
        }
    }
    return std::nullopt;
}

// gdb's DW_OP_entry_value resolution: from an inlined copy, up to the physical function
// (its frame's outermost virtual frame), then the call site in the physical caller.
std::optional<std::uint64_t> frame_context::entry_register_value(int dwarf_regno) const {
    if (frame_ == nullptr || s_.target() == nullptr) {
        return std::nullopt;
    }
    try {
        return entry_register_value_from(s_.stack(tid_), dwarf_regno);
    } catch (const ompdbg::error&) {
        return std::nullopt;   // no stack for this thread, or a malformed call site
    }
}

std::optional<std::uint64_t> frame_context::entry_register_value_from(const std::vector<stack_frame>& frames,
                                                                      int dwarf_regno) const {
    const stack_frame* callee = nullptr;
    const stack_frame* caller = nullptr;
    for (const stack_frame& f : frames) {
        if (f.physical_index == frame_->physical_index) {
            callee = &f;   // the last one: the physical function
        } else if (f.physical_index == frame_->physical_index + 1) {
            caller = &f;   // the first one: innermost scope of the call
            break;
        }
    }
    if (callee == nullptr || caller == nullptr || !callee->function || callee->module == nullptr ||
        caller->module == nullptr || !caller->module->elf || caller->module->elf->debug() == nullptr) {
        return std::nullopt;
    }
    frame_context caller_ctx(s_, tid_, *caller);
    return dwarf::call_site_parameter_value(*caller->module->elf->debug(), caller_ctx, caller->physical.pc.addr(),
                                            callee->function->name,
                                            callee->function->entry_pc + callee->module->load_bias, dwarf_regno);
}

void frame_context::read_static_memory(std::uint64_t addr, std::span<std::byte> out) const {
    if (!static_module_.elf) {
        cannot_access(addr);
    }
    // Initialised data lives in the file; .bss is zero before the program runs. Addresses
    // are where the program was last (static_executable).
    if (addr < static_module_.load_bias) {
        cannot_access(addr);
    }
    const std::uint64_t runtime_addr = addr;
    addr = static_module_.to_file(virt_addr(addr));
    static constexpr const char* sections[] = {".data", ".rodata", ".data.rel.ro", ".bss",
                                               ".tdata", ".got", ".init_array", ".fini_array",
                                               ".text", ".dynamic", ".got.plt", ".eh_frame"};
    for (const char* name : sections) {
        auto sec = static_module_.elf->section(name);
        if (!sec || addr < sec->addr || addr + out.size() > sec->addr + sec->size) {
            continue;
        }
        if (std::string_view(name) == ".bss") {
            std::fill(out.begin(), out.end(), std::byte{0});
            return;
        }
        std::ifstream in(static_module_.elf->path(), std::ios::binary);
        in.seekg(static_cast<std::streamoff>(sec->offset + (addr - sec->addr)));
        in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
        if (!in) {
            cannot_access(runtime_addr);
        }
        return;
    }
    cannot_access(runtime_addr);
}

// ---- variables ----

dwarf::value frame_context::read_variable(const dwarf::variable& v, const tracer::loaded_module* module) {
    const tracer::loaded_module* saved = current_module_;
    if (module != nullptr) {
        current_module_ = module;
    } else if (frame_ != nullptr) {
        current_module_ = frame_->module;
    }
    struct restore {
        const tracer::loaded_module*& ref;
        const tracer::loaded_module* old;
        ~restore() { ref = old; }
    } guard{current_module_, saved};

    dwarf::value val;
    val.val_type = v.var_type;
    const std::size_t size = v.var_type.size();
    dwarf::location loc;
    if (frame_ == nullptr) {
        // Before `run` gdb reads what the file holds; TLS and registers need a process.
        try {
            loc = dwarf::evaluate_location(v, *this);
        } catch (const ompdbg::error&) {
            error::send(fmt::format("Cannot read `{}' without registers", v.name));
        }
        if (std::holds_alternative<dwarf::location::optimized_out>(loc.value)) {
            error::send(fmt::format("Cannot read `{}' without registers", v.name));
        }
    } else {
        loc = dwarf::evaluate_location(v, *this);
    }

    auto read_reg_bytes = [&](int regno, std::size_t n) -> std::optional<std::vector<std::byte>> {
        auto r = read_register(regno);
        if (!r) {
            return std::nullopt;
        }
        std::vector<std::byte> b(std::max<std::size_t>(n, 8));
        std::memcpy(b.data(), &*r, 8);
        b.resize(n);
        return b;
    };

    std::visit(
        [&](auto&& where) {
            using T = std::decay_t<decltype(where)>;
            if constexpr (std::is_same_v<T, dwarf::location::memory>) {
                val.address = where.addr;
                val.bytes.resize(size);
                read_memory(where.addr, std::span<std::byte>(val.bytes));
            } else if constexpr (std::is_same_v<T, dwarf::location::register_>) {
                val.dwarf_register = where.dwarf_regno;
                if (auto b = read_reg_bytes(where.dwarf_regno, size)) {
                    val.bytes = std::move(*b);
                } else {
                    val.optimized_out = true;
                }
            } else if constexpr (std::is_same_v<T, dwarf::location::implicit_value>) {
                val.bytes = where.bytes;
                val.bytes.resize(size);
            } else if constexpr (std::is_same_v<T, dwarf::location::optimized_out>) {
                val.optimized_out = true;
            } else {
                // Pieces: assemble; any missing piece makes the whole value <optimized out>
                // (gdb prints partial values; we do not yet).
                for (const auto& p : where) {
                    std::vector<std::byte> part;
                    bool ok = std::visit(
                        [&](auto&& w) -> bool {
                            using P = std::decay_t<decltype(w)>;
                            if constexpr (std::is_same_v<P, dwarf::location::memory>) {
                                part.resize(p.size_bytes);
                                read_memory(w.addr, std::span<std::byte>(part));
                                return true;
                            } else if constexpr (std::is_same_v<P, dwarf::location::register_>) {
                                auto b = read_reg_bytes(w.dwarf_regno, p.size_bytes);
                                if (!b) {
                                    return false;
                                }
                                part = std::move(*b);
                                return true;
                            } else if constexpr (std::is_same_v<P, dwarf::location::implicit_value>) {
                                part = w.bytes;
                                part.resize(p.size_bytes);
                                return true;
                            } else {
                                return false;
                            }
                        },
                        p.where);
                    if (!ok) {
                        val.optimized_out = true;
                        val.bytes.clear();
                        return;
                    }
                    val.bytes.insert(val.bytes.end(), part.begin(), part.end());
                }
                val.bytes.resize(size);
            }
        },
        loc.value);
    return val;
}

namespace {

/// Variables of `scope` (a subprogram, inlined subroutine or lexical block) in scope at
/// `pc`: nested blocks first (innermost first, as gdb prints them), nested inlined
/// subroutines skipped (they are frames of their own).
void collect_scope(Dwarf_Die scope, std::uint64_t pc, const Dwarf_Die& frame_base, bool top,
                   std::vector<dwarf::variable>& out) {
    std::vector<dwarf::variable> here;
    // With the abstract instance's members no concrete child stands for (gdb lists a
    // parameter a compiler dropped from an inlined copy).
    for (Dwarf_Die child : dwarf::scope_members(scope)) {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_lexical_block) {
            if (dwarf_haspc(&child, pc) == 1) {
                collect_scope(child, pc, frame_base, false, out);
            }
            continue;
        }
        if (tag != DW_TAG_variable && !(top && tag == DW_TAG_formal_parameter)) {
            continue;
        }
        const char* name = dwarf_diename(&child);
        if (name == nullptr) {
            continue;
        }
        dwarf::variable v;
        v.name = name;
        v.die = child;
        v.is_parameter = tag == DW_TAG_formal_parameter;
        v.frame_base_die = frame_base;
        Dwarf_Attribute attr;
        Dwarf_Die type_die;
        if (dwarf_attr_integrate(&child, DW_AT_type, &attr) != nullptr && dwarf_formref_die(&attr, &type_die) != nullptr) {
            v.var_type = dwarf::type(type_die);
        }
        // Function-local statics and externs declared in the block are globals for gdb's
        // `info locals` too; a declaration (`extern int x;`) is not printed, a local the
        // compiler gave no location is ("<optimized out>").
        bool is_declaration = false;
        if (dwarf_attr_integrate(&child, DW_AT_declaration, &attr) != nullptr) {
            dwarf_formflag(&attr, &is_declaration);
        }
        if (is_declaration && !v.is_parameter) {
            continue;
        }
        here.push_back(std::move(v));
    }
    out.insert(out.end(), here.begin(), here.end());
}

}  // namespace

std::vector<dwarf::variable> frame_context::frame_variables(bool parameters) {
    std::vector<dwarf::variable> out;
    if (frame_ == nullptr || frame_->module == nullptr || !frame_->module->elf || !frame_->function) {
        return out;
    }
    dwarf::debug_info* dbg = frame_->module->elf->debug();
    if (dbg == nullptr) {
        return out;
    }
    if (frame_->inline_depth > 0) {
        // variables_at describes the innermost inlined copy; the callers of an inlined
        // copy read their own scope from their DIE.
        std::vector<dwarf::variable> all;
        collect_scope(frame_->function->die, frame_->module->to_file(frame_->physical.lookup_pc()),
                      frame_->function->frame_base_die, true, all);
        for (dwarf::variable& v : all) {
            if (v.is_parameter == parameters) {
                out.push_back(std::move(v));
            }
        }
        return out;
    }
    for (dwarf::variable& v : dbg->variables_at(frame_->module->to_file(frame_->physical.lookup_pc()))) {
        if (v.is_parameter == parameters) {
            out.push_back(std::move(v));
        }
    }
    return out;
}

// ---- eval_context ----

namespace {

/// True when two DIEs of one module belong to the same compilation unit.
bool same_unit(Dwarf_Die a, Dwarf_Die b) {
    Dwarf_Die cu_a;
    Dwarf_Die cu_b;
    if (dwarf_diecu(&a, &cu_a, nullptr, nullptr) == nullptr || dwarf_diecu(&b, &cu_b, nullptr, nullptr) == nullptr) {
        return false;
    }
    return dwarf_dieoffset(&cu_a) == dwarf_dieoffset(&cu_b) && cu_a.cu == cu_b.cu;
}

/// Whether `dbg` defines an out-of-line function `name` that other units see: gdb finds
/// it in the objfile's global block, so that a library after it is not searched for a
/// variable of that name (`print main` must not build libc's whole index of globals).
bool defines_external_function(const dwarf::debug_info& dbg, std::string_view name) {
    for (const dwarf::function& fn : dbg.find_functions(name)) {
        Dwarf_Die die = fn.die;
        Dwarf_Attribute attr;
        bool external = false;
        if (!fn.is_inlined && dwarf_attr_integrate(&die, DW_AT_external, &attr) != nullptr &&
            dwarf_formflag(&attr, &external) == 0 && external) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::optional<dwarf::value> frame_context::lookup_variable(std::string_view name) {
    if (frame_ != nullptr && frame_->module != nullptr && frame_->module->elf) {
        for (const bool params : {false, true}) {
            for (const dwarf::variable& v : frame_variables(params)) {
                if (v.name == name) {
                    return read_variable(v, frame_->module);
                }
            }
        }
    }
    // gdb's order (lookup_symbol_aux): a static of the frame's own compilation unit, then
    // external variables (the frame's module first), then the statics of other units, the
    // program's before its libraries'. A frame in libc must not see libc's private
    // `current` before the program's `static long current`.
    auto found = [&](const dwarf::variable& g, const tracer::loaded_module* m) {
        // A threadprivate object kept by the OpenMP runtime: this thread's copy (DMPL).
        return dmpl_thread_copy(s_, tid_, g.name, read_variable(g, m));
    };
    std::map<const tracer::loaded_module*, dwarf::variable> statics;
    for (const tracer::loaded_module* m : search_order()) {
        if (!m->elf) {
            continue;
        }
        dwarf::debug_info* dbg = m->elf->debug();
        if (dbg == nullptr) {
            continue;
        }
        std::optional<std::uint64_t> cu;
        bool frame_module = frame_ != nullptr && m == frame_->module;
        if (frame_module) {
            cu = m->to_file(frame_->physical.lookup_pc());
        }
        auto g = dbg->find_global(name, cu);
        if (!g) {
            if (defines_external_function(*dbg, name)) {
                return std::nullopt;   // a function: the evaluator's lookup_function finds it here
            }
            continue;
        }
        if (g->is_external || (frame_module && frame_->function && same_unit(g->die, frame_->function->die))) {
            return found(*g, m);
        }
        statics.emplace(m, *g);
    }
    if (statics.empty()) {
        return std::nullopt;
    }
    if (tracer::target* tgt = s_.target()) {
        for (const tracer::loaded_module& m : tgt->modules()) {
            if (auto it = statics.find(&m); it != statics.end()) {
                return found(it->second, &m);
            }
        }
    }
    const auto& [m, g] = *statics.begin();
    return found(g, m);
}

namespace {

/// The type of the function with debug information that an ELF symbol without any aliases
/// (glibc's `printf` is `__printf`, `puts` is `_IO_puts`): gdb prints and calls it with
/// that function's type. nullopt when no out-of-line function starts at `file_addr`.
std::optional<dwarf::type> alias_function_type(const tracer::loaded_module& m, std::uint64_t file_addr) {
    dwarf::debug_info* dbg = m.elf->debug();
    if (dbg == nullptr) {
        return std::nullopt;
    }
    try {
        auto chain = dbg->function_chain_at(file_addr);
        if (!chain.empty() && !chain.back().is_inlined && chain.back().entry_pc == file_addr) {
            return dwarf::type(chain.back().die);
        }
    } catch (const ompdbg::error&) {
        // unreadable DWARF: the symbol has no debug information as far as we can tell
    }
    return std::nullopt;
}

}  // namespace

std::optional<dwarf::value> frame_context::lookup_function(std::string_view name) {
    auto mods = search_order();
    for (const tracer::loaded_module* m : mods) {
        if (!m->elf) {
            continue;
        }
        if (dwarf::debug_info* dbg = m->elf->debug()) {
            for (const dwarf::function& fn : dbg->find_functions(name)) {
                if (fn.is_inlined) {
                    continue;
                }
                dwarf::value v;
                v.val_type = dwarf::type(fn.die);
                v.address = m->to_runtime(fn.low_pc()).addr();
                return v;
            }
        }
    }
    for (const tracer::loaded_module* m : mods) {
        if (!m->elf) {
            continue;
        }
        for (const dwarf::symbol& sym : m->elf->find_symbols(name)) {
            if (sym.kind != dwarf::symbol_kind::function && sym.kind != dwarf::symbol_kind::ifunc) {
                continue;
            }
            dwarf::value v;
            v.val_type = alias_function_type(*m, sym.value).value_or(dwarf::nodebug_function_type());
            v.address = m->to_runtime(sym.value).addr();
            return v;
        }
    }
    return std::nullopt;
}

std::optional<dwarf::type> frame_context::lookup_type(std::string_view name) {
    for (const tracer::loaded_module* m : search_order()) {
        if (!m->elf) {
            continue;
        }
        if (dwarf::debug_info* dbg = m->elf->debug()) {
            if (auto t = dbg->find_type(name)) {
                return t;
            }
        }
    }
    return std::nullopt;
}

std::optional<std::uint64_t> frame_context::read_register(std::string_view name) {
    read_named_register_ = true;
    if (frame_ == nullptr) {
        if (tracer::registers{}.read(name)) {
            error::send("No registers.");
        }
        return std::nullopt;
    }
    return frame_registers().read(name);
}

void frame_context::write_register(std::string_view name, std::uint64_t v) {
    tracer::target* tgt = s_.target();
    if (frame_ == nullptr || tgt == nullptr) {
        error::send("No registers.");
    }
    if (frame_->physical_index != 0) {
        error::send("Writing registers of outer frames is not supported.");
    }
    tracer::thread* th = tgt->find_thread(tid_);
    if (th == nullptr) {
        error::send("No registers.");
    }
    tracer::registers r = th->regs();
    if (!r.write(name, v)) {
        error::send(fmt::format("Invalid register `{}'", name));
    }
    th->write_regs(r);
}

void frame_context::read_memory(std::uint64_t addr, std::span<std::byte> out) {
    static_cast<const frame_context*>(this)->read_memory(addr, out);
    if (read_log_ != nullptr) {
        read_log_->emplace_back(addr, out.size());
    }
}

void frame_context::write_memory(std::uint64_t addr, std::span<const std::byte> data) {
    tracer::target* tgt = s_.target();
    if (frame_ == nullptr || tgt == nullptr) {
        error::send(fmt::format("Cannot access memory at address 0x{:x}", addr));
    }
    tgt->write_memory(virt_addr(addr), data);
}

std::optional<std::uint64_t> frame_context::read_dwarf_register(int regno) {
    return static_cast<const frame_context*>(this)->read_register(regno);
}

std::string frame_context::symbolize(std::uint64_t addr) {
    std::string l = value_symbol_label(s_, addr);
    return l.empty() ? std::string() : "<" + l + ">";
}

namespace {

/// Finds enumerator `name` among the enumeration types declared at file or namespace
/// scope of one CU tree (gdb resolves `print RED` through the symbol table the same way).
std::optional<dwarf::value> find_enumerator_in(Dwarf_Die parent, std::string_view name, int depth) {
    Dwarf_Die child;
    if (depth > 4 || dwarf_child(&parent, &child) != 0) {
        return std::nullopt;
    }
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_enumeration_type) {
            Dwarf_Die e;
            if (dwarf_child(&child, &e) == 0) {
                do {
                    const char* n = dwarf_diename(&e);
                    if (dwarf_tag(&e) == DW_TAG_enumerator && n != nullptr && name == n) {
                        Dwarf_Attribute attr;
                        Dwarf_Sword sv = 0;
                        if (dwarf_attr(&e, DW_AT_const_value, &attr) == nullptr || dwarf_formsdata(&attr, &sv) != 0) {
                            return std::nullopt;
                        }
                        dwarf::value v;
                        v.val_type = dwarf::type(child);
                        std::size_t size = v.val_type.size() != 0 ? v.val_type.size() : 4;
                        v.bytes.resize(size);
                        std::int64_t val = sv;
                        std::memcpy(v.bytes.data(), &val, std::min<std::size_t>(size, 8));
                        return v;
                    }
                } while (dwarf_siblingof(&e, &e) == 0);
            }
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type) {
            if (auto v = find_enumerator_in(child, name, depth + 1)) {
                return v;
            }
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return std::nullopt;
}

}  // namespace

std::optional<dwarf::value> frame_context::lookup_enumerator(std::string_view name) {
    for (const tracer::loaded_module* m : search_order()) {
        if (!m->elf) {
            continue;
        }
        dwarf::debug_info* dbg = m->elf->debug();
        if (dbg == nullptr || dbg->raw() == nullptr) {
            continue;
        }
        Dwarf* dw = dbg->raw();
        Dwarf_Off off = 0;
        Dwarf_Off next = 0;
        std::size_t header = 0;
        while (dwarf_nextcu(dw, off, &next, &header, nullptr, nullptr, nullptr) == 0) {
            Dwarf_Die cu;
            if (dwarf_offdie(dw, off + header, &cu) != nullptr) {
                if (auto v = find_enumerator_in(cu, name, 0)) {
                    return v;
                }
            }
            off = next;
        }
        if (defines_external_function(*dbg, name)) {
            return std::nullopt;   // a function of this module comes before later modules' enumerators
        }
    }
    return std::nullopt;
}

void frame_context::write_dwarf_register(int regno, std::uint64_t v) {
    auto name = tracer::dwarf_register_name(regno);
    if (!name) {
        error::send(fmt::format("Invalid register number {}.", regno));
    }
    write_register(*name, v);
}

bool frame_context::language_cplus() {
    return frame_ != nullptr && frame_->function && dwarf::die_is_cplus(frame_->function->die);
}

}  // namespace ompdbg::debugger
