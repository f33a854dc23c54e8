// The fields a `catch omp EVENT if COND` condition may name when the agent evaluates it
// (fast_agent.hpp): the team that __kmp_fork_call forks or __kmp_join_call ends, read by
// the agent at the caller's frame through the return addresses of its calls.

#include "breakpoints/fast_agent.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::debugger {

namespace {

/// The return addresses of the direct calls (call rel32) of the function `target` in the
/// function `caller` of `runtime` (both local symbols of the OpenMP runtime), read from the
/// process's code.
std::vector<std::uint64_t> calls_from(session& s, const tracer::loaded_module& runtime, const std::string& caller,
                                      const std::string& target) {
    std::vector<std::uint64_t> out;
    auto callers = runtime.elf->find_symbols(caller);
    auto targets = runtime.elf->find_symbols(target);
    if (callers.empty() || targets.empty() || callers.front().size == 0 || callers.front().size > (1u << 20)) {
        return out;
    }
    std::uint64_t start = runtime.to_runtime(callers.front().value).addr();
    std::uint64_t callee = runtime.to_runtime(targets.front().value).addr();
    std::vector<std::uint8_t> code(callers.front().size);
    if (s.process()->try_read_memory(virt_addr(start), std::as_writable_bytes(std::span(code))) != code.size()) {
        return out;
    }
    // A byte scan, not a decode: an e8 that is not an instruction start would have to
    // name ompd_bp_* by accident, and its "return address" is then never on a stack.
    for (std::size_t i = 0; i + 5 <= code.size(); ++i) {
        std::int32_t rel = 0;
        std::memcpy(&rel, code.data() + i + 1, 4);
        if (code[i] == 0xe8 && start + i + 5 + static_cast<std::uint64_t>(static_cast<std::int64_t>(rel)) == callee) {
            out.push_back(start + i + 5);
        }
    }
    return out;
}

}  // namespace

std::vector<dwarf::agent_caller_field> omp_event_agent_fields(session& s, const tracer::loaded_module& runtime,
                                                              std::string_view catch_what) {
    std::vector<dwarf::agent_caller_field> fields;
    for (const char* name : {"team_size", "level", "active_level", "thread_num", "implicit", "final", "task_flags"}) {
        fields.push_back(dwarf::agent_caller_field{name, "", nullptr, 0, {}});
    }
    // The team __kmp_fork_call forks, as read_omp_event (libdebugger) reads it at a stop; the team
    // __kmp_join_call ends, the thread's current region that OMPD shows at a stop.
    struct event_call {
        const char* catch_what;
        const char* caller;
        const char* event;
    };
    static constexpr event_call calls[] = {{"omp parallel-begin", "__kmp_fork_call", "ompd_bp_parallel_begin"},
                                           {"omp parallel-end", "__kmp_join_call", "ompd_bp_parallel_end"}};
    const event_call* call = nullptr;
    for (const auto& c : calls) {
        call = catch_what == c.catch_what ? &c : call;
    }
    if (call == nullptr || !runtime.elf || runtime.elf->debug() == nullptr) {
        return fields;
    }
    auto returns = calls_from(s, runtime, call->caller, call->event);
    for (auto& f : fields) {
        if (f.name == "team_size" || f.name == "level") {
            f.expression = f.name == "team_size" ? "team->t.t_nproc" : "team->t.t_level";
            f.info = runtime.elf->debug();
            f.load_bias = runtime.load_bias;
            f.return_addresses = returns;
        }
    }
    return fields;
}

}  // namespace ompdbg::debugger
