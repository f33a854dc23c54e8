#include "internal/store_emulation.hpp"

#include <cstring>

namespace ompdbg::tracer::internal {

namespace {

unsigned long long& reg_ref(user_regs_struct& r, int n) {
    switch (n) {
    case 0: return r.rax;
    case 1: return r.rcx;
    case 2: return r.rdx;
    case 3: return r.rbx;
    case 4: return r.rsp;
    case 5: return r.rbp;
    case 6: return r.rsi;
    case 7: return r.rdi;
    case 8: return r.r8;
    case 9: return r.r9;
    case 10: return r.r10;
    case 11: return r.r11;
    case 12: return r.r12;
    case 13: return r.r13;
    case 14: return r.r14;
    default: return r.r15;
    }
}

std::uint64_t reg_value(const user_regs_struct& r, int n) {
    return reg_ref(const_cast<user_regs_struct&>(r), n);
}

std::uint64_t read_le(std::span<const std::byte> code, std::size_t at, std::size_t n) {
    std::uint64_t v = 0;
    std::memcpy(&v, code.data() + at, n);
    return v;
}

std::int64_t sign_extend(std::uint64_t v, std::size_t bytes) {
    unsigned shift = static_cast<unsigned>(64 - 8 * bytes);
    return static_cast<std::int64_t>(v << shift) >> shift;
}

}  // namespace

std::optional<emulated_move> decode_move(std::span<const std::byte> code, const user_regs_struct& regs) {
    std::size_t i = 0;
    bool opsize16 = false;
    std::uint64_t segment_base = 0;
    unsigned rex = 0;
    auto byte_at = [&](std::size_t k) { return static_cast<unsigned>(code[k]); };
    // Legacy prefixes we understand, then at most one REX right before the opcode.
    while (i < code.size()) {
        unsigned b = byte_at(i);
        if (b == 0x66) {
            opsize16 = true;
        } else if (b == 0x64) {
            segment_base = regs.fs_base;
        } else if (b == 0x65) {
            segment_base = regs.gs_base;
        } else if (b == 0x2e || b == 0x3e || b == 0x26 || b == 0x36) {
            // null segment prefixes in 64-bit mode
        } else {
            break;
        }
        ++i;
    }
    if (i < code.size() && (byte_at(i) & 0xf0) == 0x40) {
        rex = byte_at(i);
        ++i;
    }
    if (i >= code.size()) {
        return std::nullopt;
    }
    const bool rex_w = (rex & 8) != 0;
    const bool rex_r = (rex & 4) != 0;
    const bool rex_x = (rex & 2) != 0;
    const bool rex_b = (rex & 1) != 0;
    unsigned op = byte_at(i++);
    bool two_byte = false;
    if (op == 0x0f) {
        if (i >= code.size()) {
            return std::nullopt;
        }
        two_byte = true;
        op = byte_at(i++);
    }
    emulated_move m;
    std::size_t wide = rex_w ? 8 : opsize16 ? 2 : 4;
    std::size_t imm_size = 0;
    if (!two_byte && (op == 0x88 || op == 0x89)) {
        m.is_store = true;
        m.size = op == 0x88 ? 1 : wide;
    } else if (!two_byte && (op == 0x8a || op == 0x8b)) {
        m.size = op == 0x8a ? 1 : wide;
        m.reg_size = m.size;
    } else if (!two_byte && (op == 0xc6 || op == 0xc7)) {
        m.is_store = true;
        m.size = op == 0xc6 ? 1 : wide;
        imm_size = op == 0xc6 ? 1 : opsize16 ? 2 : 4;
    } else if (two_byte && (op == 0xb6 || op == 0xb7 || op == 0xbe || op == 0xbf)) {
        m.size = (op == 0xb6 || op == 0xbe) ? 1 : 2;
        m.reg_size = wide;
        m.sign_extend = op == 0xbe || op == 0xbf;
    } else {
        return std::nullopt;
    }
    if (i >= code.size()) {
        return std::nullopt;
    }
    unsigned modrm = byte_at(i++);
    unsigned mod = modrm >> 6;
    int reg = static_cast<int>(((modrm >> 3) & 7) | (rex_r ? 8 : 0));
    unsigned rm = modrm & 7;
    if (mod == 3) {
        return std::nullopt;   // register to register: never a memory fault
    }
    if ((op == 0xc6 || op == 0xc7) && !two_byte && ((modrm >> 3) & 7) != 0) {
        return std::nullopt;   // C6/C7 with reg != 0 are not moves
    }
    // 8-bit registers 4-7 without REX are AH, CH, DH, BH: not emulated.
    if (m.size == 1 && (op == 0x88 || op == 0x8a) && rex == 0 && reg >= 4) {
        return std::nullopt;
    }
    std::uint64_t ea = 0;
    bool rip_relative = false;
    std::int64_t disp = 0;
    if (rm == 4) {
        if (i >= code.size()) {
            return std::nullopt;
        }
        unsigned sib = byte_at(i++);
        unsigned scale = 1u << (sib >> 6);
        int index = static_cast<int>(((sib >> 3) & 7) | (rex_x ? 8 : 0));
        unsigned base = sib & 7;
        if (index != 4) {
            ea += reg_value(regs, index) * scale;
        }
        if (base == 5 && mod == 0) {
            if (i + 4 > code.size()) {
                return std::nullopt;
            }
            disp = sign_extend(read_le(code, i, 4), 4);
            i += 4;
        } else {
            ea += reg_value(regs, static_cast<int>(base | (rex_b ? 8 : 0)));
        }
    } else if (rm == 5 && mod == 0) {
        rip_relative = true;
        if (i + 4 > code.size()) {
            return std::nullopt;
        }
        disp = sign_extend(read_le(code, i, 4), 4);
        i += 4;
    } else {
        ea += reg_value(regs, static_cast<int>(rm | (rex_b ? 8 : 0)));
    }
    if (mod == 1) {
        if (i + 1 > code.size()) {
            return std::nullopt;
        }
        disp = sign_extend(read_le(code, i, 1), 1);
        i += 1;
    } else if (mod == 2) {
        if (i + 4 > code.size()) {
            return std::nullopt;
        }
        disp = sign_extend(read_le(code, i, 4), 4);
        i += 4;
    }
    std::uint64_t imm = 0;
    if (imm_size != 0) {
        if (i + imm_size > code.size()) {
            return std::nullopt;
        }
        imm = read_le(code, i, imm_size);
        if (imm_size == 4 && m.size == 8) {
            imm = static_cast<std::uint64_t>(sign_extend(imm, 4));
        }
        i += imm_size;
    }
    m.length = i;
    ea += static_cast<std::uint64_t>(disp);
    if (rip_relative) {
        ea += regs.rip + m.length;
    }
    m.address = ea + segment_base;
    if (m.is_store) {
        m.value = imm_size != 0 ? imm : reg_value(regs, reg);
    } else {
        m.reg = reg;
    }
    return m;
}

void apply_load(const emulated_move& m, std::uint64_t loaded, user_regs_struct& regs) {
    unsigned long long& r = reg_ref(regs, m.reg);
    std::uint64_t v = loaded;
    if (m.size < 8) {
        v &= (std::uint64_t{1} << (8 * m.size)) - 1;
    }
    if (m.sign_extend) {
        v = static_cast<std::uint64_t>(sign_extend(v, m.size));
    }
    switch (m.reg_size) {
    case 8: r = v; break;
    case 4: r = v & 0xffffffffu; break;   // a 32-bit destination clears the upper half
    case 2: r = (r & ~0xffffull) | (v & 0xffffu); break;
    default: r = (r & ~0xffull) | (v & 0xffu); break;
    }
    regs.rip += m.length;
}

}  // namespace ompdbg::tracer::internal
