// Register transfer between gdb's x86-64 target description (64bit-core.xml,
// 64bit-sse.xml, 64bit-linux.xml, 64bit-segments.xml) and ptrace's structures.
#include "internal/remote_registers.hpp"

#include <cstddef>
#include <cstring>
#include <optional>

namespace ompdbg::tracer::internal {

namespace {

using gp_field = unsigned long long user_regs_struct::*;

struct gp_name {
    const char* name;
    gp_field field;
};

constexpr gp_name gp_names[] = {
    {"rax", &user_regs_struct::rax},         {"rbx", &user_regs_struct::rbx},
    {"rcx", &user_regs_struct::rcx},         {"rdx", &user_regs_struct::rdx},
    {"rsi", &user_regs_struct::rsi},         {"rdi", &user_regs_struct::rdi},
    {"rbp", &user_regs_struct::rbp},         {"rsp", &user_regs_struct::rsp},
    {"r8", &user_regs_struct::r8},           {"r9", &user_regs_struct::r9},
    {"r10", &user_regs_struct::r10},         {"r11", &user_regs_struct::r11},
    {"r12", &user_regs_struct::r12},         {"r13", &user_regs_struct::r13},
    {"r14", &user_regs_struct::r14},         {"r15", &user_regs_struct::r15},
    {"rip", &user_regs_struct::rip},         {"eflags", &user_regs_struct::eflags},
    {"cs", &user_regs_struct::cs},           {"ss", &user_regs_struct::ss},
    {"ds", &user_regs_struct::ds},           {"es", &user_regs_struct::es},
    {"fs", &user_regs_struct::fs},           {"gs", &user_regs_struct::gs},
    {"fs_base", &user_regs_struct::fs_base}, {"gs_base", &user_regs_struct::gs_base},
    {"orig_rax", &user_regs_struct::orig_rax},
};

std::optional<gp_field> gp_of(const std::string& name) {
    for (auto& g : gp_names) {
        if (name == g.name) {
            return g.field;
        }
    }
    return std::nullopt;
}

/// Where a floating-point/SSE register lives in user_fpregs_struct, and how many bytes.
std::pair<std::byte*, std::size_t> fp_place(user_fpregs_struct& fp, const std::string& name) {
    auto* base = reinterpret_cast<std::byte*>(&fp);
    auto at = [&](auto& member, std::size_t n) { return std::pair(reinterpret_cast<std::byte*>(&member), n); };
    if (name == "fctrl") return at(fp.cwd, 2);
    if (name == "fstat") return at(fp.swd, 2);
    if (name == "ftag") return at(fp.ftw, 2);
    if (name == "fop") return at(fp.fop, 2);
    if (name == "fioff") return at(fp.rip, 8);
    if (name == "fooff") return at(fp.rdp, 8);
    if (name == "mxcsr") return at(fp.mxcsr, 4);
    if (name.size() == 3 && name.starts_with("st") && name[2] >= '0' && name[2] <= '7') {
        return {reinterpret_cast<std::byte*>(fp.st_space) + (name[2] - '0') * 16, 10};
    }
    if (name.starts_with("xmm") && name.size() <= 5) {
        int n = std::atoi(name.c_str() + 3);
        if (n >= 0 && n < 16) {
            return {reinterpret_cast<std::byte*>(fp.xmm_space) + n * 16, 16};
        }
    }
    (void)base;
    return {nullptr, 0};
}

}  // namespace

registers registers_from_remote(const std::vector<rsp::register_desc>& layout, std::string_view raw) {
    user_regs_struct gp{};
    user_fpregs_struct fp{};
    for (auto& r : layout) {
        if (r.offset + r.size > raw.size()) {
            continue;   // the agent sent fewer registers (the rest are unavailable)
        }
        const char* src = raw.data() + r.offset;
        if (auto f = gp_of(r.name)) {
            unsigned long long v = 0;
            std::memcpy(&v, src, std::min<std::size_t>(r.size, sizeof v));
            gp.*(*f) = v;
        } else if (auto [dst, n] = fp_place(fp, r.name); dst) {
            std::memcpy(dst, src, std::min(n, r.size));
        }
    }
    return registers(gp, fp);
}

std::string registers_to_remote(const std::vector<rsp::register_desc>& layout, std::string raw, const registers& regs) {
    user_fpregs_struct fp = regs.fp_regs();
    for (auto& r : layout) {
        if (r.offset + r.size > raw.size()) {
            continue;
        }
        char* dst = raw.data() + r.offset;
        if (auto f = gp_of(r.name)) {
            unsigned long long v = regs.gp().*(*f);
            std::memcpy(dst, &v, std::min<std::size_t>(r.size, sizeof v));
        } else if (auto [src, n] = fp_place(fp, r.name); src) {
            std::memcpy(dst, src, std::min(n, r.size));
        }
    }
    return raw;
}

}  // namespace ompdbg::tracer::internal
