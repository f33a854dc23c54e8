// debug_info line tables: rows at addresses (objdump's decoded table, gdb's lines),
// FILE:LINE breakpoint addresses (gdb's locations), line ranges for `next`.

#include "elf_test_support.hpp"

#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

#include <map>
#include <set>

using namespace ompdbg::test;
using namespace ompdbg::test::dwarf;
using ompdbg::dwarf::elf_file;

namespace {

/// address → lines of the statement rows objdump decodes for SOURCE.
std::map<std::uint64_t, std::set<int>> objdump_rows(const std::string& bin, const std::string& source) {
    std::string out = tool_output({"objdump", "--dwarf=decodedline", bin});
    std::map<std::uint64_t, std::set<int>> rows;
    std::istringstream in(out);
    std::regex re("^(\\S*/)?" + source + R"(\s+(\d+)\s+(0x[0-9a-f]+)(\s+\d+)?\s+x\s*$)");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, re)) {
            rows[std::stoull(m[3].str(), nullptr, 16)].insert(std::stoi(m[2].str()));
        }
    }
    return rows;
}

}  // namespace

TEST_CASE("line_at gives the statement row objdump decodes at each address", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c")));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    auto rows = objdump_rows(bin, "dwarf_c.c");
    REQUIRE(rows.size() > 10);
    for (auto& [addr, lines] : rows) {
        INFO(fmt_hex(addr));
        auto e = d->line_at(addr);
        REQUIRE(e);
        CHECK(e->addr == addr);
        CHECK(lines.count(e->line) == 1);
        CHECK(e->file.ends_with("/dwarf_c.c"));
        // One byte further is still covered by a row at or before it.
        auto next = d->line_at(addr + 1);
        if (next) {
            CHECK(next->addr <= addr + 1);
        }
    }
    CHECK_FALSE(d->line_at(0));
}

TEST_CASE("the line of each function's breakpoint is the line gdb reports", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c", {0})));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    for (std::string name : {"main", "add", "blocks", "use_square", "sum_point"}) {
        INFO(name);
        std::string out = gdb(bin, {"break " + name});
        std::smatch m;
        REQUIRE(std::regex_search(out, m, std::regex(R"(Breakpoint 1 at (0x[0-9a-f]+): file .*dwarf_c\.c, line (\d+)\.)")));
        auto fns = d->find_functions(name);
        REQUIRE(fns.size() == 1);
        CHECK(fns[0].breakpoint_pc == std::stoull(m[1].str(), nullptr, 16));
        auto e = d->line_at(fns[0].breakpoint_pc);
        REQUIRE(e);
        CHECK(e->line == std::stoi(m[2].str()));
    }
}

TEST_CASE("break FILE:LINE resolves to gdb's locations, sliding past lines without code", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c")));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    int blank = marker_line("dwarf_c.c", "main_first") + 2;   // a comment line
    std::vector<int> lines{marker_line("dwarf_c.c", "add_body"), marker_line("dwarf_c.c", "blocks_first"),
                           marker_line("dwarf_c.c", "blocks_shadow"), marker_line("dwarf_c.c", "blocks_inner"),
                           marker_line("dwarf_c.c", "use_square"), marker_line("dwarf_c.c", "square_body"),
                           marker_line("dwarf_c.c", "main_after_blank"), blank};
    for (int line : lines) {
        INFO("line " << line);
        auto truth = gdb_breakpoint_addresses(bin, "dwarf_c.c:" + std::to_string(line));
        auto [addrs, used] = d->addresses_for_line("dwarf_c.c", line);
        CHECK(addrs == truth);
        if (line == blank && !truth.empty()) {
            CHECK(used > line);
        }
        // A path suffix names the same file.
        CHECK(d->addresses_for_line("dwarf/dwarf_c.c", line).first == addrs);
    }
    CHECK(d->addresses_for_line("no_such_file.c", 10).first.empty());
    CHECK(d->addresses_for_line("dwarf_c.c", 100000).first.empty());
}

TEST_CASE("line_range_at covers the whole source line around an address", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c", {0})));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    int line = marker_line("dwarf_c.c", "main_after_blank");
    auto [addrs, used] = d->addresses_for_line("dwarf_c.c", line);
    REQUIRE(addrs.size() == 1);
    auto range = d->line_range_at(addrs[0] + 1);
    REQUIRE(range);
    CHECK(range->first <= addrs[0]);
    CHECK(range->second > addrs[0] + 1);
    CHECK(d->line_at(range->first)->line == line);
    CHECK(d->line_at(range->second - 1)->line == line);
    CHECK(d->line_at(range->second)->line != line);
    // gdb's `info line` agrees on where the line starts.
    std::string out = gdb(bin, {"info line dwarf_c.c:" + std::to_string(line)});
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(R"(starts at address (0x[0-9a-f]+))")));
    CHECK(range->first == std::stoull(m[1].str(), nullptr, 16));
}

TEST_CASE("line_rows_of_function lists the rows inside the function, in address order", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c")));
    auto f = elf_file::open(bin);
    auto* d = f->debug();
    auto fns = d->find_functions("blocks");
    REQUIRE(fns.size() == 1);
    auto rows = d->line_rows_of_function(fns[0]);
    REQUIRE_FALSE(rows.empty());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CHECK(fns[0].contains(rows[i].addr));
        if (i > 0) {
            CHECK(rows[i - 1].addr <= rows[i].addr);
        }
    }
    auto files = d->source_files();
    CHECK(std::any_of(files.begin(), files.end(), [](const std::string& s) { return s.ends_with("/dwarf_c.c"); }));
}
