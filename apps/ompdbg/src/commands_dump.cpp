// dump / append: gdb's commands that copy target memory or a value's bytes to a file
// (gdb's cli-dump.c syntax). Only the raw binary format is written; gdb's ihex, srec,
// tekhex and verilog formats are refused with a clear error.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::app {

namespace {

/// Chunk of one read + write: large enough that the system calls cost nothing beside the
/// copy, small enough to keep the debugger's memory flat while dumping gigabytes.
constexpr std::size_t chunk_size = 4u << 20;

std::string_view skip_spaces(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    return s;
}

/// The next whitespace-delimited word (gdb's scan_filename / scan_expression both stop at
/// the first blank), and the rest after it.
std::string_view next_word(std::string_view& s) {
    s = skip_spaces(s);
    std::size_t end = s.find_first_of(" \t");
    std::string_view w = s.substr(0, end);
    s = end == std::string_view::npos ? std::string_view{} : skip_spaces(s.substr(end));
    return w;
}

struct file_closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
};
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

file_ptr open_output(const std::string& path, bool append) {
    std::FILE* f = std::fopen(path.c_str(), append ? "ab" : "wb");
    if (f == nullptr) {
        error::send(fmt::format("{}: {}.", path, std::strerror(errno)));
    }
    return file_ptr(f);
}

void write_all(std::FILE* f, const std::string& path, std::span<const std::byte> data) {
    if (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size()) {
        error::send(fmt::format("{}: {}.", path, std::strerror(errno)));
    }
}

std::uint64_t address_of(const dwarf::value& v) {
    dwarf::type t = v.val_type.strip_cv_typedef();
    if ((t.kind() == dwarf::type_kind::array || t.kind() == dwarf::type_kind::function) && v.address) {
        return *v.address;
    }
    return static_cast<std::uint64_t>(dwarf::as_integer(v));
}

/// `dump [binary] memory FILE START STOP`: the bytes of [START, STOP) in target memory.
void dump_memory(session& s, std::string_view args, bool append) {
    std::string path(next_word(args));
    if (path.empty()) {
        error::send("Missing filename.");
    }
    std::string_view lo_text = next_word(args);
    if (lo_text.empty()) {
        error::send("Missing start address.");
    }
    if (skip_spaces(args).empty()) {
        error::send("Missing stop address.");
    }
    frame_context ctx = frame_context::for_selection(s);
    std::uint64_t lo = address_of(dwarf::evaluate(lo_text, ctx));
    std::uint64_t hi = address_of(dwarf::evaluate(args, ctx));
    if (hi <= lo) {
        error::send("Invalid memory address range (start >= end).");
    }
    // In chunks, so that a huge range does not need as much memory here; the file is
    // created only once the first chunk could be read (gdb reads before it writes).
    file_ptr f;
    std::vector<std::byte> buf(std::min<std::uint64_t>(hi - lo, chunk_size));
    for (std::uint64_t a = lo; a < hi;) {
        std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(hi - a, buf.size()));
        ctx.read_memory(a, std::span<std::byte>(buf.data(), n));
        if (!f) {
            f = open_output(path, append);
        }
        write_all(f.get(), path, std::span<const std::byte>(buf.data(), n));
        a += n;
    }
}

/// `dump [binary] value FILE EXPR`: the value's bytes (gdb's dump_value_to_file).
void dump_value(session& s, std::string_view args, bool append) {
    std::string path(next_word(args));
    if (path.empty()) {
        error::send("Missing filename.");
    }
    if (skip_spaces(args).empty()) {
        error::send("No value to dump.");
    }
    frame_context ctx = frame_context::for_selection(s);
    dwarf::value v = dwarf::evaluate(args, ctx);
    if (v.optimized_out) {
        error::send("value has been optimized out");
    }
    std::vector<std::byte> bytes = v.bytes;
    if (bytes.empty() && v.address) {
        bytes.resize(v.val_type.size());
        ctx.read_memory(*v.address, bytes);
    }
    file_ptr f = open_output(path, append);
    write_all(f.get(), path, bytes);
}

/// Registers `memory` and `value` under the `dump`/`append` prefix and under its `binary`
/// sub-prefix; the other formats of gdb are named in the error.
void add_forms(command_table& t, const std::string& name, bool append) {
    const char* verb = append ? "Append" : "Write";
    command_table& top = prefix_table(t, name, fmt::format("{} target code/data to a local file.", verb));
    for (command_table* table : {&top, &prefix_table(top, "binary", fmt::format("{} target code/data to a raw binary file.", verb))}) {
        table->add(command{"memory", {}, fmt::format("{} contents of memory to a raw binary file.", verb),
                           fmt::format("{} [binary] memory FILE START STOP\n{} the bytes of target memory "
                                       "[START, STOP) to FILE.",
                                       name, verb),
                           [append](session& s, std::string_view a) { dump_memory(s, a, append); }, false,
                           nullptr});
        table->add(command{"value", {}, fmt::format("{} the value of an expression to a raw binary file.", verb),
                           fmt::format("{} [binary] value FILE EXPR\n{} the bytes of EXPR's value to FILE.", name, verb),
                           [append](session& s, std::string_view a) { dump_value(s, a, append); }, false, nullptr});
    }
    if (!append) {
        for (const char* other : {"ihex", "srec", "tekhex", "verilog"}) {
            std::string fmt_name = other;
            top.add(command{fmt_name, {}, fmt::format("Write target code/data to an {} file (not supported).", other),
                            fmt::format("dump {} ...: ompdbg writes only raw binary files (dump binary memory).", other),
                            [fmt_name](session&, std::string_view) {
                                error::send(fmt::format("dump {}: only the binary format is supported.", fmt_name));
                            },
                            false, nullptr});
        }
    }
}

}  // namespace

void register_dump_commands(command_table& t) {
    add_forms(t, "dump", false);
    add_forms(t, "append", true);
}

}  // namespace ompdbg::app
