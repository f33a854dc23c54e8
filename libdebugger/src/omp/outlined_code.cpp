#include "ompdbg/debugger/omp/outlined_code.hpp"

#include <capstone/capstone.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace ompdbg::debugger {

namespace {

/// A capstone handle in Intel syntax (destination first) with operand details.
class intel_decoder {
public:
    intel_decoder() {
        if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle_) != CS_ERR_OK) {
            handle_ = 0;
            return;
        }
        cs_option(handle_, CS_OPT_DETAIL, CS_OPT_ON);
        insn_ = cs_malloc(handle_);
    }
    ~intel_decoder() {
        if (insn_ != nullptr) {
            cs_free(insn_, 1);
        }
        if (handle_ != 0) {
            cs_close(&handle_);
        }
    }
    intel_decoder(const intel_decoder&) = delete;
    intel_decoder& operator=(const intel_decoder&) = delete;

    /// The next instruction at *address (advancing code/size/address), or null.
    const cs_insn* next(const std::uint8_t*& code, std::size_t& size, std::uint64_t& address) {
        if (insn_ == nullptr || !cs_disasm_iter(handle_, &code, &size, &address, insn_)) {
            return nullptr;
        }
        return insn_;
    }

private:
    csh handle_ = 0;
    cs_insn* insn_ = nullptr;
};

/// The 64-bit register a general-purpose sub-register belongs to (eax -> rax); other
/// registers (xmm...) are their own.
unsigned full_register(unsigned r) {
    static const std::array<std::array<unsigned, 5>, 16> gprs{{
        {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH},
        {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH},
        {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH},
        {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH},
        {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_SIL},
        {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_DIL},
        {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, X86_REG_BPL},
        {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, X86_REG_SPL},
        {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, X86_REG_R8B},
        {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, X86_REG_R9B},
        {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, X86_REG_R10B},
        {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, X86_REG_R11B},
        {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, X86_REG_R12B},
        {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, X86_REG_R13B},
        {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, X86_REG_R14B},
        {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, X86_REG_R15B},
    }};
    for (const auto& g : gprs) {
        if (std::find(g.begin(), g.end(), r) != g.end()) {
            return g[0];
        }
    }
    return r;
}

bool is_move(unsigned id) {
    switch (id) {
        case X86_INS_MOV: case X86_INS_MOVABS: case X86_INS_MOVZX: case X86_INS_MOVSX:
        case X86_INS_MOVSXD: case X86_INS_MOVSS: case X86_INS_MOVSD: case X86_INS_MOVQ:
        case X86_INS_MOVD: case X86_INS_MOVAPS: case X86_INS_MOVUPS: case X86_INS_MOVAPD:
        case X86_INS_MOVUPD: case X86_INS_MOVDQA: case X86_INS_MOVDQU:
            return true;
        default:
            return false;
    }
}

bool is_branch(const cs_insn& insn) {
    for (std::uint8_t i = 0; i < insn.detail->groups_count; ++i) {
        auto g = insn.detail->groups[i];
        if (g == CS_GRP_JUMP || g == CS_GRP_RET || g == CS_GRP_IRET) {
            return true;
        }
    }
    return false;
}

/// What a register holds, as far as the walk can tell.
struct reg_value {
    enum class kind { unknown, param_pointer, param_value, local_value } what = kind::unknown;
    int local = -1;          ///< local_value: which local
    std::set<int> derived;   ///< locals whose values flowed into it (through arithmetic too)
};

class walker {
public:
    walker(const outlined_code& code, const std::vector<frame_slot>& locals)
        : code_(code), locals_(locals), facts_(locals.size()) {
        for (unsigned r : {X86_REG_RDI, X86_REG_RSI, X86_REG_RDX, X86_REG_RCX, X86_REG_R8, X86_REG_R9}) {
            regs_[r].what = reg_value::kind::param_pointer;   // the incoming arguments
        }
    }

    std::vector<slot_facts> run() {
        intel_decoder dec;
        const auto* p = reinterpret_cast<const std::uint8_t*>(code_.bytes.data());
        std::size_t size = code_.bytes.size();
        std::uint64_t address = code_.address;
        while (size > 0) {
            const cs_insn* insn = dec.next(p, size, address);
            if (insn == nullptr) {
                break;
            }
            step(*insn);
        }
        return std::move(facts_);
    }

private:
    /// The local whose slot [rbp+disp, +size) overlaps, or -1.
    int local_at(std::int64_t disp, std::uint64_t size) const {
        for (std::size_t i = 0; i < locals_.size(); ++i) {
            const auto& l = locals_[i];
            auto end = l.offset + static_cast<std::int64_t>(l.size);
            if (disp < end && disp + static_cast<std::int64_t>(std::max<std::uint64_t>(size, 1)) > l.offset) {
                return static_cast<int>(i);
            }
        }
        return -1;
    }

    static bool rbp_slot(const cs_x86_op& op) {
        return op.type == X86_OP_MEM && op.mem.base == X86_REG_RBP && op.mem.index == X86_REG_INVALID &&
               op.mem.segment == X86_REG_INVALID;
    }

    reg_value& reg(unsigned r) { return regs_[full_register(r)]; }

    /// A register holding a parameter, or a value loaded through one (gcc passes
    /// aggregates by a pointer stored in .omp_data_i).
    bool through_parameter(unsigned r) {
        auto k = reg(r).what;
        return k == reg_value::kind::param_pointer || k == reg_value::kind::param_value;
    }

    /// What a source operand gives: a register's value, a frame slot's, or memory reached
    /// through a parameter pointer.
    reg_value source(const cs_x86_op& op) {
        reg_value v;
        if (op.type == X86_OP_REG) {
            return reg(op.reg);
        }
        if (op.type != X86_OP_MEM) {
            return v;
        }
        if (rbp_slot(op)) {
            int l = local_at(op.mem.disp, op.size);
            if (l >= 0) {
                v.what = reg_value::kind::local_value;
                v.local = l;
                v.derived.insert(l);
                read_local(l);
            } else if (op.size == 8 && (param_slots_.count(op.mem.disp) != 0 || op.mem.disp >= 16)) {
                v.what = reg_value::kind::param_pointer;
            }
            return v;
        }
        if (op.mem.index == X86_REG_INVALID && op.mem.base != X86_REG_INVALID && through_parameter(op.mem.base)) {
            v.what = reg_value::kind::param_value;
        }
        return v;
    }

    void read_local(int l) {
        if (in_reduction_section_) {
            facts_[static_cast<std::size_t>(l)].reduction = true;
        }
    }

    void store(const cs_x86_op& dst, const reg_value& v) {
        if (rbp_slot(dst)) {
            int l = local_at(dst.mem.disp, dst.size);
            if (l >= 0) {
                if (v.what == reg_value::kind::param_value) {
                    facts_[static_cast<std::size_t>(l)].copied_in = true;
                }
            } else if (v.what == reg_value::kind::param_pointer && dst.size == 8) {
                param_slots_.insert(dst.mem.disp);   // a parameter (or a copy of it) spilled
            }
            return;
        }
        if (dst.type == X86_OP_MEM && dst.mem.base != X86_REG_INVALID && through_parameter(dst.mem.base) &&
            v.what == reg_value::kind::local_value) {
            facts_[static_cast<std::size_t>(v.local)].copied_out = true;
        }
    }

    void call(const cs_insn& insn) {
        std::string name;
        if (code_.callee_name) {
            name = code_.callee_name(insn.address + insn.size);
            if (auto at = name.find("@plt"); at != std::string::npos) {
                name.resize(at);
            }
        }
        bool reduces = !name.empty() &&
                       std::find(code_.reduction_routines.begin(), code_.reduction_routines.end(), name) !=
                           code_.reduction_routines.end() &&
                       (!code_.on_construct_line || code_.on_construct_line(insn.address) ||
                        code_.on_construct_line(insn.address + insn.size));   // gcc: the row
                                                                              // starts after it
        if (reduces) {
            for (int l : addressed_since_call_) {
                facts_[static_cast<std::size_t>(l)].reduction = true;
            }
        }
        in_reduction_section_ = reduces;
        addressed_since_call_.clear();
        regs_.clear();
    }

    void step(const cs_insn& insn) {
        const cs_x86& x = insn.detail->x86;
        unsigned id = insn.id;
        if (id == X86_INS_CALL) {
            call(insn);
            return;
        }
        if (is_branch(insn)) {
            // A branch target may be reached with other values: forget what registers
            // hold (unoptimised code reloads from the frame at every statement anyway),
            // but keep what flowed into them, for a combining loop (cmpxchg) after it.
            for (auto& [r, v] : regs_) {
                v.what = reg_value::kind::unknown;
            }
            return;
        }
        bool locked = x.prefix[0] == X86_PREFIX_LOCK || (id == X86_INS_XCHG && x.op_count == 2 &&
                                                          (x.operands[0].type == X86_OP_MEM ||
                                                           x.operands[1].type == X86_OP_MEM));
        if (locked && (!code_.on_construct_line || code_.on_construct_line(insn.address))) {
            for (std::uint8_t i = 0; i < x.op_count; ++i) {
                if (x.operands[i].type == X86_OP_REG) {
                    for (int l : reg(x.operands[i].reg).derived) {
                        facts_[static_cast<std::size_t>(l)].reduction = true;
                    }
                }
            }
        }
        if (id == X86_INS_LEA && x.op_count == 2 && x.operands[0].type == X86_OP_REG) {
            const cs_x86_op& m = x.operands[1];
            reg_value v;
            if (rbp_slot(m)) {
                int l = local_at(m.mem.disp, 1);
                if (l >= 0) {
                    addressed_since_call_.insert(l);
                    read_local(l);
                }
            } else if (m.mem.base != X86_REG_INVALID && m.mem.index == X86_REG_INVALID &&
                       through_parameter(m.mem.base)) {
                v.what = reg_value::kind::param_pointer;   // a field of a parameter's block
            }
            reg(x.operands[0].reg) = v;
            return;
        }
        if (is_move(id) && x.op_count == 2) {
            reg_value v = source(x.operands[1]);
            if (x.operands[0].type == X86_OP_REG) {
                reg(x.operands[0].reg) = v;
            } else {
                store(x.operands[0], v);
            }
            return;
        }
        // Anything else: what it reads flows into what it writes; nothing is known of the
        // result's kind.
        std::set<int> flowed;
        for (std::uint8_t i = 0; i < x.op_count; ++i) {
            const cs_x86_op& op = x.operands[i];
            if (op.type == X86_OP_REG || (op.type == X86_OP_MEM && (i > 0 || x.op_count == 1 || rbp_slot(op)))) {
                reg_value v = source(op);
                flowed.insert(v.derived.begin(), v.derived.end());
            }
        }
        if (x.op_count >= 1 && x.operands[0].type == X86_OP_REG) {
            reg_value& d = reg(x.operands[0].reg);
            d.what = reg_value::kind::unknown;
            d.local = -1;
            d.derived.insert(flowed.begin(), flowed.end());
        }
    }

    const outlined_code& code_;
    const std::vector<frame_slot>& locals_;
    std::vector<slot_facts> facts_;
    std::map<unsigned, reg_value> regs_;
    std::set<std::int64_t> param_slots_;
    std::set<int> addressed_since_call_;
    bool in_reduction_section_ = false;
};

}  // namespace

std::vector<slot_facts> analyse_outlined_code(const outlined_code& code, const std::vector<frame_slot>& locals) {
    if (locals.empty() || code.bytes.empty()) {
        return std::vector<slot_facts>(locals.size());
    }
    return walker(code, locals).run();
}

}  // namespace ompdbg::debugger

