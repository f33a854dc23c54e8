// The instructions a jump pad displaces, relocated (instruction_relocation.cpp), and the
// pad's code (jump_pad.cpp), checked byte by byte against hand-assembled x86-64.

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "internal/instruction_relocation.hpp"
#include "internal/jump_pad.hpp"

using namespace ompdbg::tracer::internal;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> b) {
    std::vector<std::byte> out;
    for (int x : b) {
        out.push_back(static_cast<std::byte>(x));
    }
    return out;
}

std::int32_t rel_at(const std::vector<std::byte>& code, std::size_t at) {
    std::int32_t v;
    std::memcpy(&v, code.data() + at, 4);
    return v;
}

}  // namespace

TEST_CASE("relocation re-targets a rip-relative operand to the same data", "[tracer][jump_pad]") {
    // mov 0x100(%rip),%eax ; nop
    auto code = bytes({0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x90});
    auto r = relocate_instructions(code, 0x401000, 0x400000, 5);
    REQUIRE(r.moved);
    CHECK(r.moved->covered == 6);
    REQUIRE(r.moved->code.size() == 6);
    // The data is at 0x401006 + 0x100; from 0x400006 that is 0x1100 away.
    CHECK(rel_at(r.moved->code, 2) == 0x1100);
    CHECK(r.moved->starts.size() == 1);
}

TEST_CASE("relocation rewrites short jumps and conditional jumps as rel32 ones", "[tracer][jump_pad]") {
    // je +5 ; jmp +0x10 ; nop
    auto code = bytes({0x74, 0x05, 0xeb, 0x10, 0x90, 0x90});
    auto r = relocate_instructions(code, 0x401000, 0x400000, 5);
    REQUIRE(r.moved);
    CHECK(r.moved->covered == 5);
    auto& c = r.moved->code;
    REQUIRE(c.size() == 6 + 5 + 1);
    CHECK(c[0] == std::byte{0x0f});
    CHECK(c[1] == std::byte{0x84});
    CHECK(0x400006 + rel_at(c, 2) == 0x401007);   // je's target
    CHECK(c[6] == std::byte{0xe9});
    CHECK(0x40000b + rel_at(c, 7) == 0x401014);   // jmp's target
    CHECK(r.moved->original_offset(6) == 2u);
    CHECK(r.moved->relocated_offset(4) == 11u);
}

TEST_CASE("relocation refuses calls, returns, loops and other sites' int3s", "[tracer][jump_pad]") {
    CHECK_FALSE(relocate_instructions(bytes({0xe8, 0, 0, 0, 0}), 0x1000, 0x2000, 5).moved);
    CHECK_FALSE(relocate_instructions(bytes({0x90, 0xc3, 0x90, 0x90, 0x90}), 0x1000, 0x2000, 5).moved);
    CHECK_FALSE(relocate_instructions(bytes({0xe2, 0xfe, 0x90, 0x90, 0x90}), 0x1000, 0x2000, 5).moved);
    auto r = relocate_instructions(bytes({0x90, 0xcc, 0x90, 0x90, 0x90}), 0x1000, 0x2000, 5);
    CHECK_FALSE(r.moved);
    CHECK(r.refusal == "another breakpoint is inside the bytes the jump would replace");
    // A function that ends before 5 bytes are covered (a 1-byte ret is refused first).
    CHECK_FALSE(relocate_instructions(bytes({0x90, 0x90}), 0x1000, 0x2000, 5).moved);
}

TEST_CASE("relocation moves a function's lone ret when only padding follows it", "[tracer][jump_pad]") {
    // ompd_bp_parallel_begin of LLVM's libomp: ret, then a 15-byte nop up to the next function.
    auto code = bytes({0xc3, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0});
    auto r = relocate_instructions(code, 0x1000, 0x2000, 5, 0x1001);
    REQUIRE(r.moved);
    CHECK(r.moved->code == bytes({0xc3}));
    CHECK(r.moved->covered == 16);
    CHECK(r.moved->starts.size() == 1);
    // int3 padding counts too; the function's end unknown, or code after the ret: refused.
    CHECK(relocate_instructions(bytes({0xc3, 0xcc, 0xcc, 0xcc, 0xcc}), 0x1000, 0x2000, 5, 0x1001).moved);
    CHECK_FALSE(relocate_instructions(code, 0x1000, 0x2000, 5).moved);
    CHECK_FALSE(relocate_instructions(bytes({0xc3, 0x90, 0x31, 0xc0, 0x90}), 0x1000, 0x2000, 5, 0x1001).moved);
    // A ret that does not end the function.
    CHECK_FALSE(relocate_instructions(bytes({0xc3, 0x90, 0x90, 0x90, 0x90}), 0x1000, 0x2000, 5, 0x1005).moved);
}

TEST_CASE("a branch of the function into the displaced bytes is found", "[tracer][jump_pad]") {
    // 0x1000: nop; 0x1001: mov %edi,%eax (2); 0x1003: add $1,%eax (3); 0x1006: jmp 0x1003
    auto fn = bytes({0x90, 0x89, 0xf8, 0x83, 0xc0, 0x01, 0xeb, 0xfb});
    CHECK(branch_into(fn, 0x1000, 0x1001, 0x1006).has_value());
    CHECK_FALSE(branch_into(fn, 0x1000, 0x1003, 0x1006).has_value());
    // An indirect jump (a jump table) may land anywhere.
    auto table = bytes({0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xe0});
    CHECK(branch_into(table, 0x1000, 0x1000, 0x1005).has_value());
}

TEST_CASE("a jump pad jumps back after the displaced bytes and stops through its slot", "[tracer][jump_pad]") {
    // mov %edi,%eax (2) ; add $1,%eax (3) ; ret
    auto code = bytes({0x89, 0xf8, 0x83, 0xc0, 0x01, 0xc3});
    auto plan = build_jump_pad(code, 0x401000, 0x3ff000, 0x7000, 0x8000);
    REQUIRE(plan.pad);
    auto& pad = *plan.pad;
    CHECK(pad.moved.covered == 5);
    REQUIRE(pad.site_jump.size() == 5);
    CHECK(pad.site_jump[0] == std::byte{0xe9});
    CHECK(0x401005 + rel_at(pad.site_jump, 1) == 0x3ff000);
    CHECK(pad.code.size() <= jump_pad_size);
    CHECK(pad.code[pad.trap - pad.base] == std::byte{0xcc});
    // The relocated copy, then jmp rel32 to the site + 5.
    std::size_t r = pad.relocated - pad.base;
    CHECK(std::memcmp(pad.code.data() + r, code.data(), 5) == 0);
    CHECK(pad.code[r + 5] == std::byte{0xe9});
    std::vector<std::byte> jump(pad.code.begin() + static_cast<long>(r + 5), pad.code.begin() + static_cast<long>(r + 10));
    CHECK(pad.relocated + 10 + rel_at(jump, 1) == 0x401005);
    std::uint64_t stop;
    std::memcpy(&stop, pad.code.data() + (pad.stop_slot - pad.base), 8);
    CHECK(stop == pad.trap);
}

TEST_CASE("a jump pad out of rel32 reach of its site is refused", "[tracer][jump_pad]") {
    auto code = bytes({0x89, 0xf8, 0x83, 0xc0, 0x01, 0xc3});
    auto plan = build_jump_pad(code, 0x7f0000001000, 0x3ff000, 0x7000, 0x8000);
    CHECK_FALSE(plan.pad);
    CHECK(plan.refusal == "no memory for a pad within 2 GB of the site");
}
