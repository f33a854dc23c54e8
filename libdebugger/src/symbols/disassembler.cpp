#include "ompdbg/debugger/symbols/disassembler.hpp"

#include <capstone/capstone.h>

#include <cctype>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"

namespace ompdbg::debugger {

namespace {

struct insn_deleter {
    std::size_t count;
    void operator()(cs_insn* p) const { cs_free(p, count); }
};

bool is_decimal(std::string_view s) {
    std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
    if (i >= s.size()) {
        return false;
    }
    for (; i < s.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
            return false;
        }
    }
    return true;
}

/// gdb (binutils) writes every immediate and displacement in hex; capstone writes small
/// ones in decimal. `bits` is the operand width for negative immediates.
std::string to_gdb_number(std::string_view dec, bool immediate, unsigned bits) {
    long long v = std::stoll(std::string(dec));
    if (v >= 0) {
        return fmt::format("0x{:x}", v);
    }
    if (!immediate) {
        return fmt::format("-0x{:x}", -v);
    }
    std::uint64_t u = static_cast<std::uint64_t>(v);
    if (bits < 64) {
        u &= (std::uint64_t{1} << bits) - 1;
    }
    return fmt::format("0x{:x}", u);
}

/// Rewrites capstone's AT&T operand text into binutils' spelling: no space after commas,
/// hex numbers everywhere.
std::string gdb_operands(std::string_view ops, unsigned imm_bits) {
    std::string out;
    out.reserve(ops.size() + 8);
    std::size_t i = 0;
    int depth = 0;
    while (i < ops.size()) {
        char c = ops[i];
        if (c == '(') {
            ++depth;
        } else if (c == ')') {
            --depth;
        }
        if (c == ',' && i + 1 < ops.size() && ops[i + 1] == ' ') {
            out += ',';
            i += 2;
            continue;
        }
        bool starts_number = depth == 0 && (std::isdigit(static_cast<unsigned char>(c)) || c == '-') &&
                             (i == 0 || ops[i - 1] == '$' || ops[i - 1] == ',' || ops[i - 1] == ' ' ||
                              ops[i - 1] == ':' || ops[i - 1] == '*');
        if (starts_number) {
            std::size_t j = i + 1;
            while (j < ops.size() && std::isalnum(static_cast<unsigned char>(ops[j]))) {
                ++j;
            }
            std::string_view tok = ops.substr(i, j - i);
            bool immediate = i > 0 && ops[i - 1] == '$';
            if (is_decimal(tok)) {
                out += to_gdb_number(tok, immediate, imm_bits);
            } else if (immediate && tok.size() > 3 && tok.substr(0, 3) == "-0x") {
                // capstone's "$-0x1000": binutils writes a negative immediate as the
                // operand's unsigned value ("$0xfffffffffffff000" against %rax).
                out += to_gdb_number(std::to_string(-std::stoll(std::string(tok.substr(1)), nullptr, 16)), true,
                                     imm_bits);
            } else {
                out += tok;
            }
            i = j;
            continue;
        }
        out += c;
        ++i;
    }
    return out;
}

}  // namespace

disassembler::disassembler() {
    csh h = 0;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
        error::send("cannot open the capstone disassembler");
    }
    cs_option(h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
    cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
    handle_ = h;
    csh intel = 0;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &intel) != CS_ERR_OK) {
        cs_close(&h);
        error::send("cannot open the capstone disassembler");
    }
    intel_handle_ = intel;
}

disassembler::~disassembler() {
    csh h = handle_;
    if (h != 0) {
        cs_close(&h);
    }
    csh i = intel_handle_;
    if (i != 0) {
        cs_close(&i);
    }
}

instruction disassembler::decode(std::uint64_t address, std::span<const std::byte> code,
                                 const std::function<std::string(std::uint64_t)>& label) const {
    instruction out;
    out.address = address;
    cs_insn* raw = nullptr;
    std::size_t n = cs_disasm(handle_, reinterpret_cast<const std::uint8_t*>(code.data()), code.size(),
                              address, 1, &raw);
    if (n == 0) {
        out.size = 1;
        out.text = "(bad)";
        return out;
    }
    std::unique_ptr<cs_insn, insn_deleter> insn(raw, insn_deleter{n});
    out.size = insn->size;

    std::string mnemonic = insn->mnemonic;
    const cs_x86& x86 = insn->detail->x86;
    unsigned imm_bits = 64;
    bool has_reg = false;
    std::optional<std::uint64_t> branch_target;
    std::optional<std::uint64_t> rip_target;
    for (std::uint8_t k = 0; k < x86.op_count; ++k) {
        const cs_x86_op& op = x86.operands[k];
        if (op.type == X86_OP_REG) {
            has_reg = true;
            imm_bits = op.size * 8u;
        } else if (op.type == X86_OP_MEM) {
            if (op.size != 0 && !has_reg) {
                imm_bits = op.size * 8u;
            }
            if (op.mem.base == X86_REG_RIP) {
                rip_target = insn->address + insn->size + static_cast<std::uint64_t>(op.mem.disp);
            }
        } else if (op.type == X86_OP_IMM) {
            if (op.size != 0 && x86.op_count == 1) {
                imm_bits = op.size * 8u;
            }
        }
    }
    bool is_branch = cs_insn_group(handle_, insn.get(), CS_GRP_JUMP) ||
                     cs_insn_group(handle_, insn.get(), CS_GRP_CALL);
    if (is_branch && x86.op_count == 1 && x86.operands[0].type == X86_OP_IMM) {
        branch_target = static_cast<std::uint64_t>(x86.operands[0].imm);
    }

    // binutils omits the size suffix in 64-bit mode for call/ret/push/pop/leave/jmp, and
    // whenever a register operand already gives the size.
    static constexpr const char* q_free[] = {"callq", "retq", "pushq", "popq", "leaveq", "jmpq"};
    for (const char* m : q_free) {
        if (mnemonic == m) {
            mnemonic.pop_back();
        }
    }
    if (has_reg && mnemonic.size() > 1) {
        // The Intel spelling has no size suffix: AT&T "shrb"/"movabsq" with a register
        // operand is binutils' "shr"/"movabs"; "movslq" (Intel "movsxd") stays.
        cs_insn* iraw = nullptr;
        std::size_t in = cs_disasm(intel_handle_, insn->bytes, insn->size, address, 1, &iraw);
        if (in > 0) {
            std::string intel = iraw->mnemonic;
            cs_free(iraw, in);
            if (mnemonic.size() == intel.size() + 1 && mnemonic.compare(0, intel.size(), intel) == 0 &&
                std::strchr("bwlq", mnemonic.back()) != nullptr) {
                mnemonic = intel;
            }
        }
    }
    // capstone says movd for the REX.W form that moves a 64-bit register: binutils' movq.
    if (mnemonic == "movd") {
        for (std::uint8_t k = 0; k < x86.op_count; ++k) {
            if (x86.operands[k].type == X86_OP_REG && x86.operands[k].size == 8) {
                mnemonic = "movq";
            }
        }
    }
    // 66 90 is binutils' "xchg %ax,%ax".
    if (insn->size == 2 && insn->bytes[0] == 0x66 && insn->bytes[1] == 0x90) {
        out.text = "xchg   %ax,%ax";
        return out;
    }

    std::string ops;
    if (branch_target) {
        ops = fmt::format("0x{:x}", *branch_target);
        std::string l = label ? label(*branch_target) : std::string();
        if (!l.empty()) {
            ops += " <" + l + ">";
        }
    } else {
        ops = gdb_operands(insn->op_str, imm_bits);
        // binutils spells a scale of 1 ("(%rax,%rbx,1)") and an encoded zero displacement
        // ("0x0(%rax)"); capstone drops both.
        for (std::size_t p = ops.find(','); p != std::string::npos; p = ops.find(',', p + 1)) {
            std::size_t open = ops.rfind('(', p);
            std::size_t close = ops.find(')', p);
            std::size_t prev_close = ops.rfind(')', p);
            if (open != std::string::npos && close != std::string::npos &&
                (prev_close == std::string::npos || prev_close < open) &&
                ops.find(',', p + 1) > close) {
                // Exactly one comma inside the parentheses: base,index without a scale.
                if (ops.substr(open, close - open).find(',') == p - open) {
                    ops.insert(close, ",1");
                }
            }
        }
        const std::uint8_t mod = x86.modrm >> 6;
        bool has_mem = false;
        for (std::uint8_t k = 0; k < x86.op_count; ++k) {
            has_mem = has_mem || x86.operands[k].type == X86_OP_MEM;
        }
        if (has_mem && (mod == 1 || mod == 2) && x86.disp == 0) {
            std::size_t open = ops.find("(%");
            if (open != std::string::npos && (open == 0 || ops[open - 1] == ',' || ops[open - 1] == ':' ||
                                              ops[open - 1] == '*')) {
                ops.insert(open, "0x0");
            }
        }
        // Shifts by one (opcodes d0/d1) have no immediate in binutils' spelling.
        if ((x86.opcode[0] == 0xd0 || x86.opcode[0] == 0xd1) && ops.rfind("$0x1,", 0) == 0) {
            ops.erase(0, 5);
        }
        // A cs: segment on a nop is a padding prefix, written before the mnemonic.
        if (mnemonic.rfind("nop", 0) == 0) {
            if (std::size_t cs = ops.find("%cs:"); cs != std::string::npos) {
                ops.erase(cs, 4);
                mnemonic = "cs " + mnemonic;
                // Extra operand-size prefixes before the one nopw needs: "data16".
                std::size_t n66 = 0;
                while (n66 < insn->size && insn->bytes[n66] == 0x66) {
                    ++n66;
                }
                for (std::size_t k = 1; k < n66; ++k) {
                    mnemonic = "data16 " + mnemonic;
                }
            }
        }
    }
    if (ops.empty()) {
        out.text = mnemonic;
    } else {
        out.text = fmt::format("{:<6} {}", mnemonic, ops);
    }
    if (rip_target) {
        out.text += fmt::format("        # 0x{:x}", *rip_target);
        std::string l = label ? label(*rip_target) : std::string();
        if (!l.empty()) {
            out.text += " <" + l + ">";
        }
    }
    return out;
}

}  // namespace ompdbg::debugger
