// disassemble and readMemory: the Disassembly view (around a frame's
// instructionPointerReference, with instructions before it) and the memory view.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>

#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/symbols/disassembler.hpp"
#include "ompdbg/debugger/symbols/symbolizer.hpp"

namespace ompdbg::app::dap {

namespace {

constexpr std::int64_t max_instructions = 10000;
constexpr std::int64_t max_read = 1 << 20;
/// How far back a function's start may lie for instructions before an address.
constexpr std::uint64_t max_function_size = 1 << 20;

tracer::target& live_target(adapter& a) {
    tracer::target* t = a.model().target();
    if (t == nullptr) {
        error::send("No process: memory can be read once the program runs (or from a core).");
    }
    return *t;
}

std::uint64_t address_of(const request& r) {
    std::string ref = r.string_arg("memoryReference");
    try {
        std::size_t used = 0;
        std::uint64_t addr = std::stoull(ref, &used, 0);
        if (used == ref.size()) {
            return addr + static_cast<std::uint64_t>(r.arguments().value("offset", std::int64_t{0}));
        }
    } catch (const std::exception&) {
    }
    error::send("memoryReference \"" + ref + "\" is not an address");
}

struct decoded {
    std::uint64_t address = 0;
    std::vector<std::byte> bytes;   ///< empty: unreadable memory there
    std::string text;
};

class code_reader {
public:
    explicit code_reader(adapter& a) : session_(a.model()), target_(live_target(a)) {}

    decoded at(std::uint64_t addr) {
        std::array<std::byte, 16> code{};
        std::size_t got = target_.try_read_memory(virt_addr(addr), code);
        if (got == 0) {
            return decoded{addr, {}, "??"};
        }
        auto ins = dis_.decode(addr, std::span<const std::byte>(code.data(), got),
                               [&](std::uint64_t t) { return symbol_label(session_, t); });
        return decoded{addr, std::vector<std::byte>(code.begin(), code.begin() + static_cast<long>(ins.size)),
                       ins.text};
    }

    /// Up to `count` instructions that end exactly at `end`, decoded from the starts of
    /// the functions before it (x86 cannot be decoded backwards); fewer where no symbol
    /// says where code starts.
    std::deque<decoded> before(std::uint64_t end, std::size_t count) {
        std::deque<decoded> out;
        while (out.size() < count && end > 0) {
            auto sym = symbolize_address(session_, end - 1);
            if (!sym || sym->offset >= max_function_size) {
                break;
            }
            std::uint64_t start = end - 1 - sym->offset;
            std::vector<decoded> run;
            for (std::uint64_t at_addr = start; at_addr < end;) {
                run.push_back(at(at_addr));
                at_addr += std::max<std::size_t>(run.back().bytes.size(), 1);
            }
            std::uint64_t reached = run.empty() ? start : run.back().address + std::max<std::size_t>(run.back().bytes.size(), 1);
            if (reached != end) {
                break;   // `end` is not on an instruction boundary of that function
            }
            for (auto it = run.rbegin(); it != run.rend() && out.size() < count; ++it) {
                out.push_front(std::move(*it));
            }
            end = start;
        }
        return out;
    }

    session& model() { return session_; }

private:
    session& session_;
    tracer::target& target_;
    debugger::disassembler dis_;
};

std::string hex_bytes(const std::vector<std::byte>& bytes) {
    std::string out;
    for (auto b : bytes) {
        out += fmt::format("{}{:02x}", out.empty() ? "" : " ", static_cast<unsigned>(b));
    }
    return out;
}

nlohmann::json instruction_json(code_reader& code, const decoded& d, std::string& last_file, int& last_line) {
    nlohmann::json ins{{"address", fmt::format("0x{:x}", d.address)}, {"instruction", d.text}};
    if (d.bytes.empty()) {
        ins["presentationHint"] = "invalid";
        return ins;
    }
    ins["instructionBytes"] = hex_bytes(d.bytes);
    if (auto sym = symbolize_address(code.model(), d.address); sym && sym->offset == 0) {
        ins["symbol"] = demangle(sym->name);
    }
    module_view m = module_for(code.model(), d.address);
    if (auto* dbg = m.debug()) {
        if (auto row = dbg->line_at(d.address - m.bias); row && row->line > 0) {
            // The source line once per run of instructions of that line, as clients show it.
            if (row->file != last_file || row->line != last_line) {
                ins["location"] = {{"name", row->file.substr(row->file.rfind('/') + 1)}, {"path", row->file}};
                ins["line"] = row->line;
                last_file = row->file;
                last_line = row->line;
            }
        }
    }
    return ins;
}

void disassemble(adapter& a, request& r) {
    std::uint64_t addr = address_of(r);
    std::int64_t first = r.arguments().value("instructionOffset", std::int64_t{0});
    std::int64_t count = r.arguments().value("instructionCount", std::int64_t{0});
    if (count <= 0 || count > max_instructions) {
        error::send(fmt::format("instructionCount must be 1 to {}", max_instructions));
    }
    if (first < -max_instructions || first > max_instructions) {
        error::send(fmt::format("instructionOffset must be -{0} to {0}", max_instructions));
    }
    code_reader code(a);
    // The instructions from index `first` (relative to `addr`, negative: before it) on.
    std::vector<decoded> list;
    if (first < 0) {
        std::size_t wanted = static_cast<std::size_t>(-first);
        std::deque<decoded> back = code.before(addr, wanted);
        // Where no function start is known: a placeholder per missing instruction.
        std::uint64_t lowest = back.empty() ? addr : back.front().address;
        while (back.size() < wanted) {
            back.push_front(decoded{--lowest, {}, "??"});
        }
        list.assign(back.begin(), back.end());
    }
    for (std::int64_t i = 0; static_cast<std::int64_t>(list.size()) < count; ++i) {
        decoded d = code.at(addr);
        addr += std::max<std::size_t>(d.bytes.size(), 1);
        if (i >= first) {
            list.push_back(std::move(d));
        }
    }
    list.resize(static_cast<std::size_t>(count));
    nlohmann::json out = nlohmann::json::array();
    std::string last_file;
    int last_line = 0;
    for (const auto& d : list) {
        out.push_back(instruction_json(code, d, last_file, last_line));
    }
    r.respond({{"instructions", out}});
}

void read_memory(adapter& a, request& r) {
    std::uint64_t addr = address_of(r);
    std::int64_t count = r.arguments().value("count", std::int64_t{0});
    if (count < 0 || count > max_read) {
        error::send(fmt::format("count must be 0 to {}", max_read));
    }
    std::vector<std::byte> bytes(static_cast<std::size_t>(count));
    std::size_t got = count == 0 ? 0 : live_target(a).try_read_memory(virt_addr(addr), bytes);
    nlohmann::json body{{"address", fmt::format("0x{:x}", addr)}};
    if (got < bytes.size()) {
        body["unreadableBytes"] = bytes.size() - got;
    }
    static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string data;
    for (std::size_t i = 0; i < got; i += 3) {
        std::uint32_t n = static_cast<std::uint32_t>(bytes[i]) << 16;
        n |= i + 1 < got ? static_cast<std::uint32_t>(bytes[i + 1]) << 8 : 0;
        n |= i + 2 < got ? static_cast<std::uint32_t>(bytes[i + 2]) : 0;
        data += digits[(n >> 18) & 63];
        data += digits[(n >> 12) & 63];
        data += i + 1 < got ? digits[(n >> 6) & 63] : '=';
        data += i + 2 < got ? digits[n & 63] : '=';
    }
    body["data"] = data;
    r.respond(body);
}

}  // namespace

void register_memory_handlers(handler_table& t) {
    t["disassemble"] = disassemble;
    t["readMemory"] = read_memory;
}

}  // namespace ompdbg::app::dap
