// Decoding the push sequence of an x86-64 prologue (see prologue_saves.hpp).
#include "ompdbg/debugger/stack/prologue_saves.hpp"

#include <array>
#include <string_view>

namespace ompdbg::debugger {

namespace {

bool is_callee_saved(std::string_view r) {
    return r == "rbx" || r == "rbp" || r == "r12" || r == "r13" || r == "r14" || r == "r15";
}

}  // namespace

std::optional<std::vector<std::pair<std::string, std::uint64_t>>> prologue_saves(tracer::target& tgt,
                                                                                 std::uint64_t entry,
                                                                                 std::uint64_t pc,
                                                                                 std::uint64_t cfa) {
    static constexpr const char* low[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"};
    static constexpr const char* high[] = {"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
    std::array<std::byte, 64> code{};
    std::size_t got = tgt.try_read_memory(virt_addr(entry), code);
    if (got == 0) {
        return std::nullopt;
    }
    std::vector<std::pair<std::string, std::uint64_t>> saves;
    std::uint64_t slot = cfa - 16;
    std::size_t i = 0;
    auto byte = [&](std::size_t k) { return k < got ? static_cast<unsigned>(code[k]) : 0x100U; };
    while (i < got && entry + i < pc) {
        if (byte(i) == 0xf3 && byte(i + 1) == 0x0f && byte(i + 2) == 0x1e && byte(i + 3) == 0xfa) {
            i += 4;   // endbr64
        } else if (byte(i) >= 0x50 && byte(i) <= 0x57) {
            // `push %rax` (clang) only reserves a slot: no save the CFI records.
            if (is_callee_saved(low[byte(i) - 0x50])) {
                saves.emplace_back(low[byte(i) - 0x50], slot);
            }
            slot -= 8;
            i += 1;
        } else if (byte(i) == 0x41 && byte(i + 1) >= 0x50 && byte(i + 1) <= 0x57) {
            if (is_callee_saved(high[byte(i + 1) - 0x50])) {
                saves.emplace_back(high[byte(i + 1) - 0x50], slot);
            }
            slot -= 8;
            i += 2;
        } else if (byte(i) == 0x48 && byte(i + 1) == 0x89 && byte(i + 2) == 0xe5) {
            i += 3;   // mov %rsp,%rbp
        } else {
            break;
        }
    }
    return saves;
}

}  // namespace ompdbg::debugger
