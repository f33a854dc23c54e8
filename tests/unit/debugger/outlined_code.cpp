// The outlined-code reader on the code gcc 12 made for examples/dmpl/clauses.c's region
// (`gcc -g -O0 -fopenmp`, main._omp_fn.0 as objdump shows it at 0x1240, from the file as it
// was before its loop called mark(lp); the bytes stand on their own): the facts that
// tell a reduction copy, a firstprivate (or read-only shared) copy and a lastprivate copy
// from private data.

#include "ompdbg/debugger/omp/outlined_code.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

using namespace ompdbg::debugger;

namespace {

const unsigned char gcc12_clauses_region[] = {
    0x55, 0x48, 0x89, 0xe5, 0x53, 0x48, 0x83, 0xec, 0x38, 0x48, 0x89, 0x7d, 0xc8, 0xc7, 0x45, 0xe4,
    0x00, 0x00, 0x00, 0x00, 0x48, 0x8b, 0x45, 0xc8, 0x8b, 0x40, 0x08, 0x89, 0x45, 0xe0, 0xe8, 0xdd,
    0xfd, 0xff, 0xff, 0x85, 0xc0, 0x0f, 0x85, 0xb5, 0x00, 0x00, 0x00, 0xe8, 0xd0, 0xfd, 0xff, 0xff,
    0x83, 0xc0, 0x0a, 0x89, 0x45, 0xdc, 0x48, 0x8b, 0x45, 0xc8, 0x8b, 0x50, 0x04, 0x48, 0x8b, 0x45,
    0xc8, 0x89, 0x50, 0x04, 0x8b, 0x55, 0xe0, 0x8b, 0x45, 0xdc, 0x01, 0xc2, 0x64, 0x8b, 0x04, 0x25,
    0xfc, 0xff, 0xff, 0xff, 0x01, 0xd0, 0x01, 0x45, 0xe4, 0x8b, 0x45, 0xdc, 0x89, 0xc7, 0xe8, 0xe6,
    0xfe, 0xff, 0xff, 0xc7, 0x45, 0xec, 0x00, 0x00, 0x00, 0x00, 0xe8, 0xc1, 0xfd, 0xff, 0xff, 0x89,
    0xc3, 0xe8, 0x8a, 0xfd, 0xff, 0xff, 0x89, 0xc6, 0xb8, 0x04, 0x00, 0x00, 0x00, 0x99, 0xf7, 0xfb,
    0x89, 0xc1, 0xb8, 0x04, 0x00, 0x00, 0x00, 0x99, 0xf7, 0xfb, 0x89, 0xd0, 0x39, 0xc6, 0x7c, 0x46,
    0x0f, 0xaf, 0xf1, 0x89, 0xf2, 0x01, 0xd0, 0x8d, 0x14, 0x08, 0x39, 0xd0, 0x7d, 0x12, 0x89, 0x45,
    0xec, 0x8b, 0x45, 0xec, 0x89, 0x45, 0xe8, 0x83, 0x45, 0xec, 0x01, 0x39, 0x55, 0xec, 0x7c, 0xf1,
    0x83, 0x7d, 0xec, 0x04, 0x74, 0x15, 0xe8, 0x35, 0xfd, 0xff, 0xff, 0x48, 0x8b, 0x45, 0xc8, 0x48,
    0x8d, 0x50, 0x0c, 0x8b, 0x45, 0xe4, 0xf0, 0x01, 0x02, 0xeb, 0x29, 0x48, 0x8b, 0x45, 0xc8, 0x8b,
    0x55, 0xe8, 0x89, 0x10, 0xeb, 0xe0, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x83, 0xc1, 0x01, 0xeb, 0xb0,
    0x48, 0x8b, 0x45, 0xc8, 0x8b, 0x40, 0x10, 0x64, 0x89, 0x04, 0x25, 0xfc, 0xff, 0xff, 0xff, 0xe9,
    0x37, 0xff, 0xff, 0xff, 0x48, 0x8b, 0x5d, 0xf8, 0xc9, 0xc3,
};

std::vector<std::byte> code_bytes() {
    std::vector<std::byte> out;
    for (unsigned char c : gcc12_clauses_region) {
        out.push_back(static_cast<std::byte>(c));
    }
    return out;
}

// The frame slots of the region's locals (DW_OP_fbreg from the CFA, which is %rbp + 16).
const std::vector<frame_slot> slots{
    {-36, 4},   // pr
    {-32, 4},   // fp
    {-28, 4},   // red
    {-20, 4},   // i (the loop's)
    {-24, 4},   // lp (the loop's copy)
};
enum { pr, fp, red, loop_i, loop_lp };

outlined_code gcc_code(const std::vector<std::byte>& bytes, bool construct_lines_known) {
    outlined_code code;
    code.bytes = bytes;
    code.address = 0x1240;
    code.callee_name = [](std::uint64_t return_address) -> std::string {
        switch (return_address) {
            case 0x1263: case 0x1270: case 0x12b6: return "omp_get_thread_num@plt";
            case 0x12a3: return "mark";
            case 0x12af: return "omp_get_num_threads@plt";
            case 0x12fb: return "GOMP_barrier@plt";
            default: return "";
        }
    };
    if (construct_lines_known) {
        // clauses.c:14 (the pragma), discriminator 3: the reduction's combining code.
        code.on_construct_line = [](std::uint64_t a) { return a >= 0x12fb && a < 0x1309; };
    } else {
        code.on_construct_line = [](std::uint64_t) { return false; };
    }
    code.reduction_routines = {"GOMP_atomic_start"};
    return code;
}

}  // namespace

TEST_CASE("outlined code: gcc's reduction, firstprivate and lastprivate copies", "[app][dmpl]") {
    auto bytes = code_bytes();
    auto facts = analyse_outlined_code(gcc_code(bytes, true), slots);
    REQUIRE(facts.size() == slots.size());
    // red: combined into .omp_data_i with `lock add` on the pragma's line.
    CHECK(facts[red].reduction);
    CHECK_FALSE(facts[red].copied_in);
    // fp: loaded from .omp_data_i into its slot.
    CHECK(facts[fp].copied_in);
    CHECK_FALSE(facts[fp].reduction);
    // lp: the loop's copy, stored back into .omp_data_i by the last iteration.
    CHECK(facts[loop_lp].copied_out);
    CHECK_FALSE(facts[loop_lp].reduction);
    // pr and the loop counter: nothing but private use.
    for (int i : {pr, loop_i}) {
        CHECK_FALSE(facts[static_cast<std::size_t>(i)].reduction);
        CHECK_FALSE(facts[static_cast<std::size_t>(i)].copied_in);
        CHECK_FALSE(facts[static_cast<std::size_t>(i)].copied_out);
    }
}

TEST_CASE("outlined code: a lock-prefixed update off the construct's line is the user's atomic", "[app][dmpl]") {
    auto bytes = code_bytes();
    auto facts = analyse_outlined_code(gcc_code(bytes, false), slots);
    CHECK_FALSE(facts[red].reduction);
}

TEST_CASE("outlined code: truncated or empty code finds nothing and does not fail", "[app][dmpl]") {
    auto bytes = code_bytes();
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, bytes.size() / 2}) {
        std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
        auto facts = analyse_outlined_code(gcc_code(cut, true), slots);
        CHECK(facts.size() == slots.size());
        CHECK_FALSE(facts[red].reduction);   // its combining code is in the second half
    }
    CHECK(analyse_outlined_code(gcc_code(bytes, true), {}).empty());
}
