// The disassembler against binutils (objdump, whose text gdb's x/i shares) on the example
// programs: every instruction of .text must read the same.

#include "ompdbg/debugger/symbols/disassembler.hpp"

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace ompdbg::test;

namespace {

struct objdump_insn {
    std::uint64_t address;
    std::vector<std::byte> bytes;
    std::string text;
};

/// `objdump -d -j .text`: address, raw bytes (continued on following lines) and text.
std::vector<objdump_insn> objdump_text(const std::string& path) {
    auto r = run({"objdump", "-d", "-j", ".text", "-w", path});
    std::vector<objdump_insn> out;
    std::istringstream in(r.out);
    std::string line;
    static const std::regex row(R"(^\s+([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(.*)$)");
    std::smatch m;
    while (std::getline(in, line)) {
        if (!std::regex_match(line, m, row)) {
            continue;
        }
        objdump_insn ins;
        ins.address = std::stoull(m.str(1), nullptr, 16);
        std::istringstream hex(m.str(2));
        std::string b;
        while (hex >> b) {
            ins.bytes.push_back(static_cast<std::byte>(std::stoul(b, nullptr, 16)));
        }
        ins.text = m.str(3);
        out.push_back(std::move(ins));
    }
    return out;
}

/// The part both spell the same: no symbol labels, no trailing "# comment", single spaces.
std::string normalize(std::string t) {
    static const std::regex label(R"( <[^>]*>)");
    static const std::regex comment(R"(\s*#.*$)");
    static const std::regex trailing(R"(\s+$)");
    // objdump writes branch targets without 0x; gdb (and we) write 0x1030.
    static const std::regex branch(R"(^((j[a-z]+|call|jmp|loop[a-z]*|xbegin) +)([0-9a-f]+)( |$))");
    t = std::regex_replace(t, branch, "$010x$3$4");
    t = std::regex_replace(t, label, "");
    t = std::regex_replace(t, comment, "");
    t = std::regex_replace(t, trailing, "");
    return t;
}

}  // namespace

TEST_CASE("disassembler reads the program's code as objdump does", "[cli]") {
    std::vector<std::string> programs = example_variants("structs", 0);
    for (auto& p : example_variants("structs", 2)) {
        programs.push_back(p);
    }
    auto program = GENERATE_COPY(from_range(programs));
    CAPTURE(program);
    auto insns = objdump_text(program);
    REQUIRE(insns.size() > 50);
    ompdbg::debugger::disassembler dis;
    std::size_t mismatches = 0;
    std::ostringstream report;
    for (const auto& ins : insns) {
        auto got = dis.decode(ins.address, ins.bytes, [](std::uint64_t) { return std::string(); });
        if (got.size != ins.bytes.size()) {
            report << "size differs at 0x" << std::hex << ins.address << "\n";
            ++mismatches;
        }
        if (normalize(got.text) != normalize(ins.text)) {
            ++mismatches;
            if (mismatches < 20) {
                report << "0x" << std::hex << ins.address << ": objdump `" << ins.text << "` ours `"
                       << got.text << "`\n";
            }
        }
    }
    INFO(report.str());
    CHECK(mismatches == 0);
}

TEST_CASE("disassembler shows branch targets with their symbol and an unknown byte as (bad)", "[cli]") {
    ompdbg::debugger::disassembler dis;
    // call rel32 to 0x401126 from 0x401000, and ud-like garbage.
    const std::uint64_t at = 0x401000;
    const std::int32_t rel = 0x401126 - (0x401000 + 5);
    std::vector<std::byte> call{std::byte{0xe8}};
    for (int i = 0; i < 4; ++i) {
        call.push_back(static_cast<std::byte>((rel >> (8 * i)) & 0xff));
    }
    auto ins = dis.decode(at, call, [](std::uint64_t a) { return a == 0x401126 ? std::string("add") : std::string(); });
    CHECK(ins.size == 5);
    CHECK(ins.text == "call   0x401126 <add>");
    std::vector<std::byte> bad{std::byte{0x06}};   // push %es: invalid in 64-bit mode
    auto b = dis.decode(at, bad, {});
    CHECK(b.size == 1);
    CHECK(b.text == "(bad)");
}
