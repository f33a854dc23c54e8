// Variable locations at a breakpoint site as agent bytecode (internal/agent_location.hpp),
// and the CFA rule of a site from the call-frame information (agent_expr.hpp).

#include "internal/agent_location.hpp"

#include "ompdbg/dwarf/agent_expr.hpp"

#include <cstdlib>
#include <optional>

#include <dwarf.h>
#include <elfutils/libdw.h>

namespace ompdbg::dwarf {

std::optional<cfa_rule> cfa_rule_at(const debug_info& info, std::uint64_t file_pc) {
    Dwarf* dw = info.raw();
    if (dw == nullptr) {
        return std::nullopt;
    }
    Dwarf_Frame* frame = nullptr;
    Dwarf_CFI* own = nullptr;
    Dwarf_CFI* cfi = dwarf_getcfi(dw);   // .debug_frame, owned by dw
    if (cfi == nullptr || dwarf_cfi_addrframe(cfi, file_pc, &frame) != 0) {
        frame = nullptr;
        if (Elf* elf = dwarf_getelf(dw)) {
            own = dwarf_getcfi_elf(elf);  // .eh_frame
        }
        if (own == nullptr || dwarf_cfi_addrframe(own, file_pc, &frame) != 0) {
            if (own != nullptr) {
                dwarf_cfi_end(own);
            }
            return std::nullopt;
        }
    }
    std::optional<cfa_rule> rule;
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    if (dwarf_frame_cfa(frame, &ops, &n) == 0 && n == 1) {
        if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
            rule = cfa_rule{ops[0].atom - DW_OP_breg0, static_cast<std::int64_t>(ops[0].number)};
        } else if (ops[0].atom == DW_OP_bregx) {
            rule = cfa_rule{static_cast<int>(ops[0].number), static_cast<std::int64_t>(ops[0].number2)};
        }
    }
    std::free(frame);
    if (own != nullptr) {
        dwarf_cfi_end(own);
    }
    return rule;
}

namespace agent {

namespace {

/// The one operation of a location valid at `pc`; refused when there is none or several.
Dwarf_Op single_op(Dwarf_Attribute& attr, std::uint64_t pc, const char* what) {
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    int got = dwarf_getlocation_addr(&attr, pc, &ops, &n, 1);
    if (got <= 0 || n == 0) {
        throw refused{"a variable optimized out at the site"};
    }
    if (n != 1) {
        throw refused{what};
    }
    return ops[0];
}

/// DWARF register numbers the pad saves (0-15 general, 16 rip).
int saved_register(unsigned regno) {
    if (regno > 16) {
        throw refused{"a variable in a register the agent does not save"};
    }
    return static_cast<int>(regno);
}

/// Pushes register `regno` of the site's frame or, `caller`, of its caller's frame at the
/// site function's first instruction: the callee-saved registers are the site's, rsp is
/// above the return address, rip is that address; the others the call clobbered.
void push_reg(emitter& out, int regno, bool caller) {
    if (!caller || regno == 3 || regno == 6 || (regno >= 12 && regno <= 15)) {
        out.op8(OMPDBG_OP_REG, static_cast<std::uint8_t>(regno));
    } else if (regno == 7) {
        out.op8(OMPDBG_OP_REG, 7);
        out.constant(8);
        out.op(OMPDBG_OP_ADD);
    } else if (regno == 16) {
        out.op8(OMPDBG_OP_REG, 7);
        out.op8(OMPDBG_OP_LOAD_FRAME, 8);
    } else {
        throw refused{"a variable of the caller in a register the call clobbers"};
    }
}

void push_reg_plus(emitter& out, int regno, std::int64_t offset, bool caller) {
    push_reg(out, regno, caller);
    if (offset != 0) {
        out.constant(static_cast<std::uint64_t>(offset));
        out.op(OMPDBG_OP_ADD);
    }
}

/// The offset in its module's TLS block of a thread-local whose location is `const OFF;
/// DW_OP_form_tls_address` (or GNU's push_tls_address); nullopt for any other location.
std::optional<std::uint64_t> tls_offset(Dwarf_Attribute& attr, std::uint64_t pc) {
    Dwarf_Op* ops = nullptr;
    std::size_t n = 0;
    if (dwarf_getlocation_addr(&attr, pc, &ops, &n, 1) <= 0 || n != 2 ||
        (ops[1].atom != DW_OP_form_tls_address && ops[1].atom != DW_OP_GNU_push_tls_address)) {
        return std::nullopt;
    }
    switch (ops[0].atom) {
    case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u: case DW_OP_constu:
        return ops[0].number;
    default:
        return std::nullopt;
    }
}

}  // namespace

bool locator::push_address(const variable& v, emitter& out) {
    Dwarf_Die die = v.die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_location, &attr) == nullptr) {
        throw refused{"a variable without a location"};
    }
    if (auto off = tls_offset(attr, file_pc_)) {
        if (!tls_block_) {
            throw refused{"a thread-local outside the static TLS area"};
        }
        // In the thread's own static TLS block: mapped, like its stack.
        out.op(OMPDBG_OP_TP);
        out.constant(static_cast<std::uint64_t>(*tls_block_) + *off);
        out.op(OMPDBG_OP_ADD);
        return true;
    }
    Dwarf_Op op = single_op(attr, file_pc_, "a variable whose location is an expression the agent does not compute");
    if ((op.atom >= DW_OP_reg0 && op.atom <= DW_OP_reg31) || op.atom == DW_OP_regx) {
        return false;
    }
    if (op.atom == DW_OP_addr) {
        out.constant(op.number + bias_);
        return true;
    }
    if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31) {
        push_reg_plus(out, saved_register(op.atom - DW_OP_breg0), static_cast<std::int64_t>(op.number), caller_);
        return true;
    }
    if (op.atom != DW_OP_fbreg || !v.frame_base_die) {
        throw refused{"a variable whose location is an expression the agent does not compute"};
    }
    Dwarf_Die fn = *v.frame_base_die;
    Dwarf_Attribute fb;
    if (dwarf_attr_integrate(&fn, DW_AT_frame_base, &fb) == nullptr) {
        throw refused{"a function without a frame base"};
    }
    Dwarf_Op base = single_op(fb, file_pc_, "a frame base the agent does not compute");
    auto offset = static_cast<std::int64_t>(op.number);
    if (base.atom == DW_OP_call_frame_cfa) {
        auto rule = cfa_rule_at(info_, file_pc_);
        if (!rule) {
            throw refused{"no call-frame information at the site"};
        }
        push_reg_plus(out, saved_register(static_cast<unsigned>(rule->dwarf_regno)), rule->offset + offset, caller_);
    } else if (base.atom >= DW_OP_reg0 && base.atom <= DW_OP_reg31) {
        push_reg_plus(out, saved_register(base.atom - DW_OP_reg0), offset, caller_);
    } else if (base.atom >= DW_OP_breg0 && base.atom <= DW_OP_breg31) {
        push_reg_plus(out, saved_register(base.atom - DW_OP_breg0), static_cast<std::int64_t>(base.number) + offset, caller_);
    } else {
        throw refused{"a frame base the agent does not compute"};
    }
    return true;
}

bool locator::push_value(const variable& v, unsigned size, emitter& out) {
    Dwarf_Die die = v.die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_location, &attr) == nullptr) {
        throw refused{"a variable without a location"};
    }
    if (tls_offset(attr, file_pc_)) {
        return false;   // in memory: push_address
    }
    Dwarf_Op op = single_op(attr, file_pc_, "a variable whose location is an expression the agent does not compute");
    unsigned regno = 0;
    if (op.atom >= DW_OP_reg0 && op.atom <= DW_OP_reg31) {
        regno = op.atom - DW_OP_reg0;
    } else if (op.atom == DW_OP_regx) {
        regno = static_cast<unsigned>(op.number);
    } else {
        return false;
    }
    if (size > 8) {
        throw refused{"a value wider than a register"};
    }
    push_reg(out, saved_register(regno), caller_);
    return true;
}

}  // namespace agent

}  // namespace ompdbg::dwarf
