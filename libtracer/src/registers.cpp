#include "ompdbg/tracer/registers.hpp"

#include <cstddef>
#include <cstring>

namespace ompdbg::tracer {

namespace {

// Where a named register lives in user_regs_struct, and which bytes of it the name covers.
struct reg_slot {
    std::string_view name;
    std::size_t offset;   // byte offset of the full 64-bit register in user_regs_struct
    unsigned size;        // bytes the name covers
    unsigned shift;       // byte offset inside the register (ah, bh, ... = 1)
};

#define OMPDBG_GP(field) offsetof(user_regs_struct, field)

// 64-bit registers and their 32/16/8-bit views, as gdb names them on x86-64.
constexpr reg_slot slots[] = {
    {"rax", OMPDBG_GP(rax), 8, 0}, {"eax", OMPDBG_GP(rax), 4, 0}, {"ax", OMPDBG_GP(rax), 2, 0},
    {"al", OMPDBG_GP(rax), 1, 0},  {"ah", OMPDBG_GP(rax), 1, 1},
    {"rbx", OMPDBG_GP(rbx), 8, 0}, {"ebx", OMPDBG_GP(rbx), 4, 0}, {"bx", OMPDBG_GP(rbx), 2, 0},
    {"bl", OMPDBG_GP(rbx), 1, 0},  {"bh", OMPDBG_GP(rbx), 1, 1},
    {"rcx", OMPDBG_GP(rcx), 8, 0}, {"ecx", OMPDBG_GP(rcx), 4, 0}, {"cx", OMPDBG_GP(rcx), 2, 0},
    {"cl", OMPDBG_GP(rcx), 1, 0},  {"ch", OMPDBG_GP(rcx), 1, 1},
    {"rdx", OMPDBG_GP(rdx), 8, 0}, {"edx", OMPDBG_GP(rdx), 4, 0}, {"dx", OMPDBG_GP(rdx), 2, 0},
    {"dl", OMPDBG_GP(rdx), 1, 0},  {"dh", OMPDBG_GP(rdx), 1, 1},
    {"rsi", OMPDBG_GP(rsi), 8, 0}, {"esi", OMPDBG_GP(rsi), 4, 0}, {"si", OMPDBG_GP(rsi), 2, 0},
    {"sil", OMPDBG_GP(rsi), 1, 0},
    {"rdi", OMPDBG_GP(rdi), 8, 0}, {"edi", OMPDBG_GP(rdi), 4, 0}, {"di", OMPDBG_GP(rdi), 2, 0},
    {"dil", OMPDBG_GP(rdi), 1, 0},
    {"rbp", OMPDBG_GP(rbp), 8, 0}, {"ebp", OMPDBG_GP(rbp), 4, 0}, {"bp", OMPDBG_GP(rbp), 2, 0},
    {"bpl", OMPDBG_GP(rbp), 1, 0},
    {"rsp", OMPDBG_GP(rsp), 8, 0}, {"esp", OMPDBG_GP(rsp), 4, 0}, {"sp", OMPDBG_GP(rsp), 8, 0},
    {"spl", OMPDBG_GP(rsp), 1, 0},
    {"r8", OMPDBG_GP(r8), 8, 0},   {"r8d", OMPDBG_GP(r8), 4, 0},  {"r8w", OMPDBG_GP(r8), 2, 0},
    {"r8l", OMPDBG_GP(r8), 1, 0},
    {"r9", OMPDBG_GP(r9), 8, 0},   {"r9d", OMPDBG_GP(r9), 4, 0},  {"r9w", OMPDBG_GP(r9), 2, 0},
    {"r9l", OMPDBG_GP(r9), 1, 0},
    {"r10", OMPDBG_GP(r10), 8, 0}, {"r10d", OMPDBG_GP(r10), 4, 0}, {"r10w", OMPDBG_GP(r10), 2, 0},
    {"r10l", OMPDBG_GP(r10), 1, 0},
    {"r11", OMPDBG_GP(r11), 8, 0}, {"r11d", OMPDBG_GP(r11), 4, 0}, {"r11w", OMPDBG_GP(r11), 2, 0},
    {"r11l", OMPDBG_GP(r11), 1, 0},
    {"r12", OMPDBG_GP(r12), 8, 0}, {"r12d", OMPDBG_GP(r12), 4, 0}, {"r12w", OMPDBG_GP(r12), 2, 0},
    {"r12l", OMPDBG_GP(r12), 1, 0},
    {"r13", OMPDBG_GP(r13), 8, 0}, {"r13d", OMPDBG_GP(r13), 4, 0}, {"r13w", OMPDBG_GP(r13), 2, 0},
    {"r13l", OMPDBG_GP(r13), 1, 0},
    {"r14", OMPDBG_GP(r14), 8, 0}, {"r14d", OMPDBG_GP(r14), 4, 0}, {"r14w", OMPDBG_GP(r14), 2, 0},
    {"r14l", OMPDBG_GP(r14), 1, 0},
    {"r15", OMPDBG_GP(r15), 8, 0}, {"r15d", OMPDBG_GP(r15), 4, 0}, {"r15w", OMPDBG_GP(r15), 2, 0},
    {"r15l", OMPDBG_GP(r15), 1, 0},
    {"rip", OMPDBG_GP(rip), 8, 0}, {"pc", OMPDBG_GP(rip), 8, 0},
    {"eflags", OMPDBG_GP(eflags), 4, 0},
    {"cs", OMPDBG_GP(cs), 4, 0},   {"ss", OMPDBG_GP(ss), 4, 0},   {"ds", OMPDBG_GP(ds), 4, 0},
    {"es", OMPDBG_GP(es), 4, 0},   {"fs", OMPDBG_GP(fs), 4, 0},   {"gs", OMPDBG_GP(gs), 4, 0},
    {"fs_base", OMPDBG_GP(fs_base), 8, 0}, {"gs_base", OMPDBG_GP(gs_base), 8, 0},
    {"fp", OMPDBG_GP(rbp), 8, 0},
    {"orig_rax", OMPDBG_GP(orig_rax), 8, 0},
};
#undef OMPDBG_GP

const reg_slot* find_slot(std::string_view name) {
    if (!name.empty() && name.front() == '$') {
        name.remove_prefix(1);
    }
    for (const auto& s : slots) {
        if (s.name == name) {
            return &s;
        }
    }
    return nullptr;
}

// x86-64 psABI DWARF register numbers 0..16.
constexpr std::string_view dwarf_names[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi",
                                            "rbp", "rsp", "r8",  "r9",  "r10", "r11",
                                            "r12", "r13", "r14", "r15", "rip"};

int k_index(std::string_view name) {
    if (name.size() == 2 && name[0] == 'k' && name[1] >= '0' && name[1] <= '7') {
        return name[1] - '0';
    }
    return -1;
}

}  // namespace

const std::vector<register_info>& general_registers() {
    static const std::vector<register_info> regs = [] {
        std::vector<register_info> v;
        // gdb 13's `info registers` on x86-64 Linux: these, then k0..k7 on AVX-512 CPUs
        // (see registers::has_avx512_masks); fs_base/gs_base exist but are not listed.
        const char* names[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
                               "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
                               "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs"};
        for (const char* n : names) {
            int dw = -1;
            for (int i = 0; i < 17; ++i) {
                if (dwarf_names[i] == n) {
                    dw = i;
                }
            }
            std::string_view sv(n);
            std::size_t size = (sv == "eflags" || (sv.size() == 2 && sv[1] == 's')) ? 4 : 8;
            v.push_back({n, dw, size});
        }
        return v;
    }();
    return regs;
}

std::optional<std::string_view> dwarf_register_name(int dwarf_regno) {
    if (dwarf_regno < 0 || dwarf_regno > 16) {
        return std::nullopt;
    }
    return dwarf_names[dwarf_regno];
}

std::optional<std::uint64_t> registers::read(std::string_view name) const {
    if (!name.empty() && name.front() == '$') {
        name.remove_prefix(1);
    }
    if (int k = k_index(name); k >= 0) {
        if (!has_k_) {
            return std::nullopt;
        }
        return k_[k];
    }
    const reg_slot* s = find_slot(name);
    if (!s) {
        return std::nullopt;
    }
    std::uint64_t full;
    std::memcpy(&full, reinterpret_cast<const char*>(&gp_) + s->offset, 8);
    full >>= 8 * s->shift;
    if (s->size < 8) {
        full &= (std::uint64_t{1} << (8 * s->size)) - 1;
    }
    return full;
}

std::optional<std::uint64_t> registers::read_dwarf(int dwarf_regno) const {
    if (auto n = dwarf_register_name(dwarf_regno)) {
        return read(*n);
    }
    return std::nullopt;
}

bool registers::write(std::string_view name, std::uint64_t value) {
    if (!name.empty() && name.front() == '$') {
        name.remove_prefix(1);
    }
    if (int k = k_index(name); k >= 0) {
        if (!has_k_) {
            return false;
        }
        k_[k] = value;
        return true;
    }
    const reg_slot* s = find_slot(name);
    if (!s) {
        return false;
    }
    char* p = reinterpret_cast<char*>(&gp_) + s->offset;
    std::uint64_t full;
    std::memcpy(&full, p, 8);
    if (s->size == 8) {
        full = value;
    } else {
        // gdb merges a sub-register write into the full register (upper bits are kept).
        std::uint64_t mask = ((std::uint64_t{1} << (8 * s->size)) - 1) << (8 * s->shift);
        full = (full & ~mask) | ((value << (8 * s->shift)) & mask);
    }
    std::memcpy(p, &full, 8);
    return true;
}

}  // namespace ompdbg::tracer
