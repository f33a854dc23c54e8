#pragma once
/// A thread's registers, read all at once (PTRACE_GETREGS + GETFPREGS) and cached until the
/// thread resumes. Names follow gdb's `info registers` (rax..r15, rip, eflags, cs.., fs_base,
/// gs_base, and the 32/16/8-bit views eax, ax, al; xmm0..15 as raw bytes).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/user.h>

namespace ompdbg::tracer {

struct register_info {
    std::string name;
    int dwarf_regno;      ///< -1 when DWARF has no number for it
    std::size_t size;     ///< bytes
};

/// The general-purpose registers gdb 13 lists in `info registers`, in its order (rax ..
/// gs; fs_base/gs_base are readable by name but not listed, as in gdb). On AVX-512 CPUs gdb
/// also lists k0..k7: see registers::has_avx512_masks.
const std::vector<register_info>& general_registers();
/// DWARF (x86-64 psABI) register number → name ("rax", "rdx", ...), nullopt if unknown.
std::optional<std::string_view> dwarf_register_name(int dwarf_regno);

class registers {
public:
    registers() = default;
    registers(const user_regs_struct& gp, const user_fpregs_struct& fp) : gp_(gp), fp_(fp) {}

    /// Value of a register by gdb name (incl. sub-registers eax/ax/al, "pc", "sp", "fp").
    std::optional<std::uint64_t> read(std::string_view name) const;
    /// Value by DWARF number (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15
    /// r8-r15, 16 rip/return address).
    std::optional<std::uint64_t> read_dwarf(int dwarf_regno) const;
    /// Sets a register (sub-registers merge into the full one); false for an unknown name.
    bool write(std::string_view name, std::uint64_t value);

    std::uint64_t pc() const { return gp_.rip; }
    std::uint64_t sp() const { return gp_.rsp; }
    std::uint64_t fp() const { return gp_.rbp; }
    void set_pc(std::uint64_t pc) { gp_.rip = pc; }

    const user_regs_struct& gp() const { return gp_; }
    user_regs_struct& gp() { return gp_; }
    const user_fpregs_struct& fp_regs() const { return fp_; }
    user_fpregs_struct& fp_regs() { return fp_; }

    /// AVX-512 opmask registers k0..k7 (gdb lists them after gs on CPUs that have them).
    bool has_avx512_masks() const { return has_k_; }
    void set_avx512_masks(const std::array<std::uint64_t, 8>& k) { k_ = k; has_k_ = true; }
    const std::array<std::uint64_t, 8>& avx512_masks() const { return k_; }

private:
    user_regs_struct gp_{};
    user_fpregs_struct fp_{};
    std::array<std::uint64_t, 8> k_{};
    bool has_k_ = false;
};

}  // namespace ompdbg::tracer
