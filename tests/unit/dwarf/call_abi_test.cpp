// call_abi: the x86-64 System V classification of arguments and return values, on the
// structs of examples/calls.c as gcc and clang describe them, and on synthetic types.

#include "elf_test_support.hpp"

#include "ompdbg/dwarf/call_abi.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

#include <cstring>

using namespace ompdbg::test;
using ompdbg::dwarf::abi_class;
using ompdbg::dwarf::base_encoding;
using ompdbg::dwarf::elf_file;
using ompdbg::dwarf::type;
using ompdbg::dwarf::value;

namespace {

value int_value(const type& t, std::uint64_t v) {
    value out;
    out.val_type = t;
    out.bytes.resize(t.size());
    std::memcpy(out.bytes.data(), &v, t.size());
    return out;
}

value double_value(double d) {
    value out;
    out.val_type = type::make_base("double", 8, base_encoding::floating);
    out.bytes.resize(8);
    std::memcpy(out.bytes.data(), &d, 8);
    return out;
}

}  // namespace

TEST_CASE("classify_eightbytes follows the psABI for the structs of calls.c", "[dwarf][abi]") {
    auto program = GENERATE(example_path("calls"), example_path("calls", "clang", 4));
    CAPTURE(program);
    auto f = elf_file::open(program);
    auto find = [&](const char* name) {
        auto t = f->debug()->find_type(name);
        REQUIRE(t);
        return *t;
    };
    using C = std::array<abi_class, 2>;
    CHECK(ompdbg::dwarf::classify_eightbytes(find("struct point")) == C{abi_class::integer, abi_class::none});
    CHECK(ompdbg::dwarf::classify_eightbytes(find("struct mixed")) == C{abi_class::sse, abi_class::integer});
    CHECK(ompdbg::dwarf::classify_eightbytes(find("struct pair_d")) == C{abi_class::sse, abi_class::sse});
    // A float and an int share one eightbyte: integer wins the merge.
    CHECK(ompdbg::dwarf::classify_eightbytes(find("struct fi")) == C{abi_class::integer, abi_class::none});
    CHECK(ompdbg::dwarf::classify_eightbytes(find("struct big")) == C{abi_class::memory, abi_class::memory});
    CHECK(ompdbg::dwarf::returned_in_memory(find("struct big")));
    CHECK_FALSE(ompdbg::dwarf::returned_in_memory(find("struct mixed")));
}

TEST_CASE("classify_eightbytes of scalars: integers and pointers, sse, long double in memory", "[dwarf][abi]") {
    using C = std::array<abi_class, 2>;
    type i = type::make_base("int", 4, base_encoding::signed_int);
    type d = type::make_base("double", 8, base_encoding::floating);
    type ld = type::make_base("long double", 16, base_encoding::floating);
    CHECK(ompdbg::dwarf::classify_eightbytes(i) == C{abi_class::integer, abi_class::none});
    CHECK(ompdbg::dwarf::classify_eightbytes(type::pointer_to(d)) == C{abi_class::integer, abi_class::none});
    CHECK(ompdbg::dwarf::classify_eightbytes(d) == C{abi_class::sse, abi_class::none});
    CHECK(ompdbg::dwarf::classify_eightbytes(ld)[0] == abi_class::memory);
    CHECK_FALSE(ompdbg::dwarf::returned_in_memory(type()));
}

TEST_CASE("__int128 is two integer eightbytes, and long double is passed in memory, sixteen-byte aligned, and "
          "returned in st(0), not through a hidden pointer",
          "[dwarf][abi]") {
    using C = std::array<abi_class, 2>;
    type i128 = type::make_base("__int128", 16, base_encoding::signed_int);
    type ld = type::make_base("long double", 16, base_encoding::floating);
    type i = type::make_base("int", 4, base_encoding::signed_int);
    CHECK(ompdbg::dwarf::classify_eightbytes(i128) == C{abi_class::integer, abi_class::integer});
    CHECK_FALSE(ompdbg::dwarf::returned_in_memory(i128));
    CHECK_FALSE(ompdbg::dwarf::returned_in_memory(ld));
    value wide;
    wide.val_type = i128;
    wide.bytes.assign(16, std::byte{0});
    wide.bytes[0] = std::byte{5};
    wide.bytes[8] = std::byte{1};
    value x;
    x.val_type = ld;
    x.bytes.assign(16, std::byte{0x11});
    std::vector<value> args;
    for (std::uint64_t n = 1; n <= 7; ++n) {
        args.push_back(int_value(i, n));   // the seventh on the stack, at 0
    }
    args.push_back(x);      // at 16, not 8
    args.push_back(wide);   // no integer register left: at 32
    auto layout = ompdbg::dwarf::lay_out_call(args, std::nullopt);
    REQUIRE(layout.stack.size() == 48);
    CHECK(layout.stack[16] == std::byte{0x11});
    CHECK(layout.stack[8] == std::byte{0});
    CHECK(layout.stack[32] == std::byte{5});
    CHECK(layout.stack[40] == std::byte{1});
    auto in_regs = ompdbg::dwarf::lay_out_call(std::vector<value>{wide}, std::nullopt);
    REQUIRE(in_regs.int_regs.size() == 2);
    CHECK(in_regs.int_regs[0] == 5);
    CHECK(in_regs.int_regs[1] == 1);
}

TEST_CASE("lay_out_call fills six integer registers, then the stack, and doubles go to xmm", "[dwarf][abi]") {
    type i = type::make_base("int", 4, base_encoding::signed_int);
    std::vector<value> args;
    for (std::uint64_t n = 1; n <= 8; ++n) {
        args.push_back(int_value(i, n));
    }
    args.push_back(double_value(1.5));
    auto layout = ompdbg::dwarf::lay_out_call(args, std::nullopt);
    REQUIRE(layout.int_regs.size() == 6);
    CHECK(layout.int_regs[5] == 6);
    REQUIRE(layout.stack.size() == 16);   // 7 and 8, one eightbyte each
    std::uint64_t seventh = 0;
    std::memcpy(&seventh, layout.stack.data(), 4);
    CHECK(seventh == 7);
    REQUIRE(layout.sse_count() == 1);
    double d = 0;
    std::memcpy(&d, layout.sse_regs[0].data(), 8);
    CHECK(d == 1.5);
}

TEST_CASE("lay_out_call puts the hidden return pointer first, in rdi", "[dwarf][abi]") {
    type l = type::make_base("long", 8, base_encoding::signed_int);
    std::vector<value> args{int_value(l, 42)};
    auto layout = ompdbg::dwarf::lay_out_call(args, 0x7000);
    REQUIRE(layout.int_regs.size() == 2);
    CHECK(layout.int_regs[0] == 0x7000);
    CHECK(layout.int_regs[1] == 42);
}

TEST_CASE("returned_bytes gathers a mixed struct from xmm0 and rax", "[dwarf][abi]") {
    auto f = elf_file::open(example_path("calls"));
    auto mixed = f->debug()->find_type("struct mixed");
    REQUIRE(mixed);
    ompdbg::dwarf::return_registers r;
    double d = 2.5;
    std::memcpy(r.xmm0.data(), &d, 8);
    r.rax = 7;
    auto bytes = ompdbg::dwarf::returned_bytes(*mixed, r);
    REQUIRE(bytes);
    REQUIRE(bytes->size() == 16);
    double got_d = 0;
    long got_l = 0;
    std::memcpy(&got_d, bytes->data(), 8);
    std::memcpy(&got_l, bytes->data() + 8, 8);
    CHECK(got_d == 2.5);
    CHECK(got_l == 7);
}
