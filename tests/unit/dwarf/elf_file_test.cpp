// elf_file: opening good and bad files, symbols against readelf, separate debug files.

#include "elf_test_support.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <stdlib.h>

using namespace ompdbg::test;
using namespace ompdbg::test::dwarf;
using ompdbg::dwarf::elf_file;
namespace fs = std::filesystem;

namespace {

/// A private temporary directory, removed at the end of the test.
struct temp_dir {
    fs::path path;
    temp_dir() {
        std::string tmpl = (fs::temp_directory_path() / "ompdbg-dwarf-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

/// Restores the default debug-file directories when a test changed them.
struct debug_dirs_guard {
    std::vector<fs::path> saved = elf_file::debug_file_directories();
    ~debug_dirs_guard() { elf_file::set_debug_file_directories(saved); }
};

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& p, const std::string& data) {
    std::ofstream out(p, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

/// A stripped copy of `bin` (dir/prog) and its separate debug file under
/// dir/debug-root/.build-id/, made by objcopy with `extra` options (e.g. compression).
struct split_debug {
    fs::path root, dbg, stripped;
};
split_debug split_by_build_id(const fs::path& dir, const std::string& bin, const std::string& id,
                              std::vector<std::string> extra = {}) {
    split_debug out;
    out.root = dir / "debug-root";
    out.dbg = out.root / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
    fs::create_directories(out.dbg.parent_path());
    std::vector<std::string> argv{"objcopy", "--only-keep-debug"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(bin);
    argv.push_back(out.dbg.string());
    tool_output(argv);
    out.stripped = dir / "prog";
    tool_output({"strip", "-o", out.stripped.string(), bin});
    return out;
}

struct readelf_symbol {
    std::string name;
    std::uint64_t value;
    std::uint64_t size;
    std::string type;
    std::string bind;
};

/// Defined FUNC/OBJECT/TLS symbols as `readelf -sW` lists them (.dynsym and .symtab).
std::vector<readelf_symbol> readelf_symbols(const std::string& binary, bool dyn_only = false) {
    std::string out = dyn_only ? tool_output({"readelf", "-W", "--dyn-syms", binary})
                               : tool_output({"readelf", "-W", "--syms", binary});
    std::vector<readelf_symbol> syms;
    std::istringstream in(out);
    std::regex re(R"(^\s*\d+:\s+([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+))");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, re)) {
            continue;
        }
        std::string type = m[3], ndx = m[5], name = m[6];
        if (ndx == "UND" || (type != "FUNC" && type != "OBJECT" && type != "TLS")) {
            continue;
        }
        if (auto at = name.find('@'); at != std::string::npos) {
            name = name.substr(0, at);
        }
        syms.push_back({name, std::stoull(m[1].str(), nullptr, 16), std::stoull(m[2].str(), nullptr, 0),
                        type, m[4]});
    }
    return syms;
}

}  // namespace

TEST_CASE("elf_file::open reports a missing file like gdb", "[dwarf]") {
    try {
        elf_file::open("/nonexistent/ompdbg-no-such-file");
        FAIL("opened a missing file");
    } catch (const ompdbg::error& e) {
        CHECK(std::string(e.what()) == "/nonexistent/ompdbg-no-such-file: No such file or directory");
    }
}

TEST_CASE("elf_file::open says a text file is not in executable format", "[dwarf]") {
    temp_dir dir;
    fs::path p = dir.path / "notes.txt";
    write_all(p, "#!/bin/sh\necho this is not an ELF file\n");
    try {
        elf_file::open(p);
        FAIL("opened a text file");
    } catch (const ompdbg::error& e) {
        CHECK(std::string(e.what()) == "\"" + p.string() + "\": not in executable format: file format not recognized");
    }
    // /etc/passwd too (the issue's example), and an empty file, and a directory.
    CHECK_THROWS_AS(elf_file::open("/etc/passwd"), ompdbg::error);
    write_all(dir.path / "empty", "");
    CHECK_THROWS_AS(elf_file::open(dir.path / "empty"), ompdbg::error);
    CHECK_THROWS_AS(elf_file::open(dir.path), ompdbg::error);
}

TEST_CASE("elf_file::open rejects truncated copies with one error and never crashes", "[dwarf]") {
    std::string bin = target("dwarf_c", "gcc", 5, 0);
    std::string data = read_all(bin);
    REQUIRE(data.size() > 4096);
    temp_dir dir;
    std::vector<std::size_t> sizes{1, 4, 16, 52, 63, 64, 65, 100, 1000, 4096, data.size() / 2,
                                   data.size() - 64, data.size() - 1};
    for (std::size_t size : sizes) {
        fs::path p = dir.path / ("truncated-" + std::to_string(size));
        write_all(p, data.substr(0, size));
        INFO("truncated to " << size << " bytes");
        try {
            auto f = elf_file::open(p);
            // The section headers are at the end: every truncation loses them.
            FAIL("opened a truncated file");
        } catch (const ompdbg::error& e) {
            std::string msg = e.what();
            CHECK(msg.find(p.string()) != std::string::npos);
            CHECK(msg.find('\n') == std::string::npos);
        }
    }
}

TEST_CASE("elf_file survives corrupted copies: open fails cleanly or every query works", "[dwarf]") {
    std::string bin = target("dwarf_c", "gcc", 5, 0);
    std::string data = read_all(bin);
    temp_dir dir;
    std::mt19937 rng(12345);
    // Where damage hurts: the ELF and program headers, the section header table, and the
    // debug sections.
    std::uint64_t shoff = 0;
    std::memcpy(&shoff, data.data() + 0x28, 8);
    auto debug_info_section = elf_file::open(bin)->section(".debug_info");
    REQUIRE(debug_info_section);
    std::vector<std::pair<std::size_t, std::size_t>> regions{
        {0, 64}, {64, 512}, {shoff, data.size() - shoff},
        {debug_info_section->offset, debug_info_section->size}};
    int opened = 0;
    for (int round = 0; round < 120; ++round) {
        std::string copy = data;
        auto [start, len] = regions[round % regions.size()];
        int flips = 1 + static_cast<int>(rng() % 16);
        for (int k = 0; k < flips; ++k) {
            std::size_t at = start + rng() % len;
            copy[at] = static_cast<char>(rng() & 0xff);
        }
        fs::path p = dir.path / ("corrupt-" + std::to_string(round));
        write_all(p, copy);
        INFO("round " << round);
        try {
            auto f = elf_file::open(p);
            ++opened;
            (void)f->symbols();
            (void)f->symbol_at(f->entry());
            (void)f->find_symbols("main");
            if (auto* d = f->debug()) {
                try {
                    for (auto& fn : d->find_functions("main")) {
                        (void)d->line_at(fn.breakpoint_pc);
                        (void)d->variables_at(fn.breakpoint_pc);
                        (void)d->function_chain_at(fn.breakpoint_pc);
                    }
                    (void)d->find_global("global_counter");
                    (void)d->find_type("struct point");
                    (void)d->addresses_for_line("dwarf_c.c", 60);
                } catch (const ompdbg::error&) {
                    // a clean error is fine
                }
            }
        } catch (const ompdbg::error& e) {
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    }
    CHECK(opened > 0);   // damage to DWARF alone still opens
}

TEST_CASE("elf_file symbols match readelf for every build, local symbols included", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c")));
    INFO(bin);
    auto f = elf_file::open(bin);
    auto truth = readelf_symbols(bin);
    REQUIRE(truth.size() > 10);
    bool saw_local = false;
    for (auto& s : truth) {
        INFO(s.name);
        auto found = f->find_symbols(s.name);
        bool match = std::any_of(found.begin(), found.end(), [&](const ompdbg::dwarf::symbol& x) {
            return x.value == s.value && x.size == s.size;
        });
        CHECK(match);
        if (s.bind == "LOCAL" && match) {
            saw_local = true;
        }
    }
    CHECK(saw_local);
    CHECK(f->find_symbols("thread_value").at(0).kind == ompdbg::dwarf::symbol_kind::tls);
    CHECK(f->find_symbols("main").at(0).kind == ompdbg::dwarf::symbol_kind::function);
    CHECK(f->find_symbols("no_such_symbol_anywhere").empty());
}

namespace {

auto symbol_fields(const ompdbg::dwarf::symbol& s) {
    return std::tuple(s.name, s.value, s.size, s.kind, s.is_global, s.from_dynsym, s.section);
}

}  // namespace

// A lookup by name before every symbol is read (through the hash of names) and after it
// (through the sorted table) find the same symbols, in the same order, for the test
// programs and for the system's libraries (libc's .symtab lives in its separate debug file
// when libc6-dbg is installed).
TEST_CASE("find_symbols answers the same before and after the whole symbol table is read", "[dwarf]") {
    std::vector<std::string> files = variants("dwarf_c");
    for (const char* lib : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2",
                            "/lib/x86_64-linux-gnu/libgomp.so.1"}) {
        if (fs::exists(lib)) {
            files.push_back(lib);
        }
    }
    for (const auto& file : files) {
        INFO(file);
        std::set<std::string> names;
        {
            auto all = elf_file::open(file);
            for (const auto& s : all->symbols()) {
                names.insert(s.name);
            }
        }   // the last handle goes: the next open reads the file afresh
        REQUIRE(names.size() > 10);
        std::vector<std::string> asked(names.begin(), names.end());
        for (std::string extra : {"no_such_symbol_anywhere", "", "@", "main@@GLIBC_2.34", "malloc@GLIBC_2.2.5"}) {
            asked.push_back(extra);
        }
        auto f = elf_file::open(file);
        std::map<std::string, std::vector<ompdbg::dwarf::symbol>> before;
        for (const auto& n : asked) {
            before[n] = f->find_symbols(n);
        }
        (void)f->symbols();
        for (const auto& n : asked) {
            INFO(n);
            auto after = f->find_symbols(n);
            REQUIRE(after.size() == before[n].size());
            for (std::size_t i = 0; i < after.size(); ++i) {
                CHECK(symbol_fields(after[i]) == symbol_fields(before[n][i]));
            }
        }
    }
}

TEST_CASE("elf_file::symbol_at finds the function containing an address", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c")));
    INFO(bin);
    auto f = elf_file::open(bin);
    for (auto& s : readelf_symbols(bin)) {
        if (s.type != "FUNC" || s.size == 0) {
            continue;
        }
        INFO(s.name);
        for (std::uint64_t addr : {s.value, s.value + s.size / 2, s.value + s.size - 1}) {
            auto got = f->symbol_at(addr);
            REQUIRE(got);
            CHECK(got->value == s.value);
        }
    }
    CHECK_FALSE(f->symbol_at(0));
}

TEST_CASE("elf_file::build_id and entry agree with readelf", "[dwarf]") {
    auto bin = GENERATE(from_range(variants("dwarf_c", {0})));
    auto f = elf_file::open(bin);
    std::string notes = tool_output({"readelf", "-n", bin});
    std::smatch m;
    REQUIRE(std::regex_search(notes, m, std::regex("Build ID: ([0-9a-f]+)")));
    CHECK(f->build_id() == m[1].str());
    std::string header = tool_output({"readelf", "-h", bin});
    REQUIRE(std::regex_search(header, m, std::regex("Entry point address:\\s+(0x[0-9a-f]+)")));
    CHECK(f->entry() == std::stoull(m[1].str(), nullptr, 16));
    CHECK(f->is_pie() == (header.find("DYN (") != std::string::npos));
    auto tls = f->tls();
    REQUIRE(tls);
    CHECK(tls->memsz >= 4);
}

TEST_CASE("a stripped binary has no debug info but keeps its .dynsym symbols", "[dwarf]") {
    temp_dir dir;
    std::string bin = target("dwarf_c", "gcc", 5, 0);
    fs::path stripped = dir.path / "stripped";
    tool_output({"strip", "-o", stripped.string(), bin});
    debug_dirs_guard guard;
    elf_file::set_debug_file_directories({dir.path / "no-debug-here"});
    auto f = elf_file::open(stripped);
    CHECK_FALSE(f->has_debug_info());
    CHECK(f->debug() == nullptr);
    CHECK_FALSE(f->section(".symtab"));
    auto dyn = readelf_symbols(stripped.string(), true);
    REQUIRE_FALSE(dyn.empty());
    for (auto& s : dyn) {
        INFO(s.name);
        auto found = f->find_symbols(s.name);
        REQUIRE_FALSE(found.empty());
        CHECK(found[0].from_dynsym);
        CHECK(found[0].value == s.value);
    }
    // -rdynamic put the program's globals into .dynsym: a stripped copy still knows them.
    CHECK(f->find_symbols("add").size() == 1);
    CHECK(f->find_symbols("file_static").empty());   // a local symbol: gone with .symtab
}

TEST_CASE("a separate debug file is found by build-id under a debug-file directory", "[dwarf]") {
    temp_dir dir;
    std::string bin = target("dwarf_c", "clang", 5, 0);
    auto original = elf_file::open(bin);
    std::string id = original->build_id().value();
    auto split = split_by_build_id(dir.path, bin, id);
    const fs::path &root = split.root, &dbg = split.dbg, &stripped = split.stripped;

    debug_dirs_guard guard;
    elf_file::set_debug_file_directories({dir.path / "elsewhere", root});
    auto f = elf_file::open(stripped);
    REQUIRE(f->has_debug_info());
    CHECK(f->debug_file_path() == dbg);
    auto add = f->debug()->find_functions("add");
    REQUIRE(add.size() == 1);
    CHECK(add[0].entry_pc == original->find_symbols("add").at(0).value);
    // The full symbol table comes from the debug file, as gdb reads it.
    CHECK(f->find_symbols("add").size() == 1);

    // Without the directory the file has no debug info.
    elf_file::set_debug_file_directories({dir.path / "elsewhere"});
    CHECK_FALSE(elf_file::open(stripped)->has_debug_info());
}

TEST_CASE("a separate debug file is found by .gnu_debuglink and its CRC is checked", "[dwarf]") {
    temp_dir dir;
    std::string bin = target("dwarf_c", "gcc", 4, 0);
    auto where = GENERATE(as<std::string>{}, "same-dir", "dot-debug", "debug-dir");
    INFO(where);
    fs::path work = dir.path / "bin";
    fs::create_directories(work);
    tool_output({"objcopy", "--only-keep-debug", bin, (work / "prog.debug").string()});
    tool_output({"strip", "--remove-section=.note.gnu.build-id", "-o", (work / "prog.tmp").string(), bin});
    run({"sh", "-c", "cd '" + work.string() + "' && objcopy --add-gnu-debuglink=prog.debug prog.tmp prog"});
    REQUIRE(fs::exists(work / "prog"));
    fs::path debug_root = dir.path / "debug-root";
    fs::path expected = work / "prog.debug";
    if (where == "dot-debug") {
        fs::create_directories(work / ".debug");
        expected = work / ".debug" / "prog.debug";
        fs::rename(work / "prog.debug", expected);
    } else if (where == "debug-dir") {
        expected = debug_root / work.relative_path() / "prog.debug";
        fs::create_directories(expected.parent_path());
        fs::rename(work / "prog.debug", expected);
    }
    debug_dirs_guard guard;
    elf_file::set_debug_file_directories({debug_root});
    {
        auto f = elf_file::open(work / "prog");
        CHECK_FALSE(f->build_id());
        REQUIRE(f->has_debug_info());
        CHECK(f->debug_file_path() == expected);
        CHECK(f->debug()->find_functions("blocks").size() == 1);
    }
    // A debug file with another CRC (rebuilt, edited) is not used.
    {
        std::ofstream out(expected, std::ios::binary | std::ios::app);
        out << "x";
    }
    CHECK_FALSE(elf_file::open(work / "prog")->has_debug_info());
}

TEST_CASE("compressed debug sections are inflated into the section cache and read back from it", "[dwarf]") {
    temp_dir dir;
    std::string bin = target("dwarf_c", "gcc", 5, 0);
    auto original = elf_file::open(bin);
    std::string id = original->build_id().value();
    // What Debian ships: a stripped file and a zlib-compressed separate debug file.
    auto split = split_by_build_id(dir.path, bin, id, {"--compress-debug-sections=zlib"});
    const fs::path &root = split.root, &dbg = split.dbg, &stripped = split.stripped;
    REQUIRE(tool_output({"readelf", "-SW", dbg.string()}).find(" C ") != std::string::npos);
    // The uncompressed bytes of .debug_info, from the original program.
    fs::path info_bytes = dir.path / "debug_info.bin";
    tool_output({"objcopy", "-O", "binary", "--only-section=.debug_info", "--set-section-flags",
                 ".debug_info=alloc", bin, info_bytes.string()});
    std::string expected_info = read_all(info_bytes);
    REQUIRE_FALSE(expected_info.empty());

    fs::path cache = dir.path / "cache";
    ::setenv("OMPDBG_SECTION_CACHE", cache.c_str(), 1);
    struct unset_env {
        ~unset_env() { ::unsetenv("OMPDBG_SECTION_CACHE"); }
    } unset;
    debug_dirs_guard guard;
    elf_file::set_debug_file_directories({root});
    auto answers = [&] {
        auto f = elf_file::open(stripped);
        REQUIRE(f->has_debug_info());
        CHECK(f->debug_file_path() == dbg);
        auto add = f->debug()->find_functions("add");
        REQUIRE(add.size() == 1);
        CHECK(add[0].entry_pc == original->find_symbols("add").at(0).value);
        auto line = f->debug()->line_at(add[0].entry_pc);
        REQUIRE(line);
        auto want = original->debug()->line_at(add[0].entry_pc);
        REQUIRE(want);
        CHECK(line->line == want->line);
        CHECK(line->file == want->file);
    };
    answers();   // inflates and writes the cache
    REQUIRE(fs::is_directory(cache));
    bool found_info = false;
    for (auto& e : fs::directory_iterator(cache)) {
        INFO(e.path());
        CHECK(e.path().filename().string().starts_with(id));   // keyed by the debug file's build-id
        if (read_all(e.path()) == expected_info) {
            found_info = true;
        }
    }
    CHECK(found_info);
    answers();   // maps the cached copies

    // Bounded: over OMPDBG_SECTION_CACHE_MAX_MB, the least recently used files go first.
    {
        fs::path stale = cache / "stale-from-another-program";
        std::ofstream(stale, std::ios::binary) << std::string(std::size_t{3} << 20, 'x');
        fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(24 * 30));
        for (auto& e : fs::directory_iterator(cache)) {
            if (e.path() != stale) {
                fs::remove(e.path());   // written again below, after the stale file
            }
        }
        ::setenv("OMPDBG_SECTION_CACHE_MAX_MB", "2", 1);
        struct unset_max {
            ~unset_max() { ::unsetenv("OMPDBG_SECTION_CACHE_MAX_MB"); }
        } unset_max_env;
        answers();   // inflates and writes again: 3 MB + the sections > 2 MB
        CHECK_FALSE(fs::exists(stale));
        bool info_kept = false;
        for (auto& e : fs::directory_iterator(cache)) {
            info_kept = info_kept || read_all(e.path()) == expected_info;
        }
        CHECK(info_kept);
    }
}

TEST_CASE("PLT stubs are named NAME@plt as objdump and gdb name them", "[dwarf]") {
    // Every stub objdump labels "<NAME@plt>:" (lazy .plt, .plt.sec with IBT), by address.
    std::size_t checked = 0;
    for (const auto& bin : {target("dwarf_c", "gcc", 5, 0), target("dwarf_c", "clang", 5, 0)}) {
        INFO(bin);
        auto f = elf_file::open(bin);
        std::istringstream dis(tool_output({"objdump", "-d", "--section=.plt", "--section=.plt.sec", bin}));
        std::regex head(R"(^([0-9a-f]+) <([^>]+@plt)>:$)");
        for (std::string line; std::getline(dis, line);) {
            std::smatch m;
            if (!std::regex_match(line, m, head)) {
                continue;
            }
            std::uint64_t addr = std::stoull(m[1], nullptr, 16);
            INFO(line);
            auto sym = f->plt_symbol_at(addr + 3);   // inside the stub
            REQUIRE(sym);
            CHECK(sym->name == m[2].str());
            CHECK(sym->value == addr);
            ++checked;
        }
        CHECK_FALSE(f->plt_symbol_at(0));
    }
    CHECK(checked >= 2);
}
