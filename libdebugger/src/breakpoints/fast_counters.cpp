// The agent's per-site counters (fast_breakpoints.hpp): hits it ignored or only counted go
// to the breakpoints' hit counts, and the ignore counts it decremented back to the
// breakpoints, at every stop; ignore counts the user changed go to the agent.

#include "breakpoints/fast_agent.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"

#include "ompdbg/debugger/session/session.hpp"

#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <vector>

namespace ompdbg::debugger {

namespace {

std::string_view trimmed(const std::string& line) {
    std::string_view v(line);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
        v.remove_prefix(1);
    }
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) {
        v.remove_suffix(1);
    }
    return v;
}

}  // namespace

void write_record_field(tracer::process& proc, const agent_state& a, unsigned i, std::size_t offset,
                        std::uint64_t value, std::size_t size) {
    std::array<std::byte, 8> bytes{};
    std::memcpy(bytes.data(), &value, size);   // little-endian: the low `size` bytes
    proc.write_memory(virt_addr(record_addr(a, i) + offset), std::span(bytes.data(), size));
}

namespace {

/// The agent's counter shards, read in one piece; empty when they cannot be read.
std::vector<ompdbg_agent_shard> read_shards(tracer::process& proc, const agent_state& a) {
    std::vector<ompdbg_agent_shard> shards(OMPDBG_AGENT_SHARDS);
    auto bytes = std::as_writable_bytes(std::span(shards));
    if (proc.try_read_memory(virt_addr(a.control + offsetof(ompdbg_agent_control, shard)), bytes) != bytes.size()) {
        shards.clear();
    }
    return shards;
}

std::uint64_t passed_of(const std::vector<ompdbg_agent_shard>& shards, unsigned i) {
    std::uint64_t sum = 0;
    for (const auto& shard : shards) {
        sum += shard.passed[i];
    }
    return sum;
}

}  // namespace

std::uint64_t passed_so_far(tracer::process& proc, const agent_state& a, unsigned i) {
    return passed_of(read_shards(proc, a), i);
}

bool only_counts(const breakpoint& bp) {
    if (bp.commands.size() != 2 || trimmed(bp.commands[0]) != "silent") {
        return false;
    }
    auto resume = trimmed(bp.commands[1]);
    return resume == "continue" || resume == "cont" || resume == "c";
}

void push_ignore_counts(session& s, agent_state& a) {
    auto* proc = s.process();
    for (auto& [site, rec] : a.fast) {
        auto bp = s.breakpoints().find(rec.breakpoint);
        if (!rec.delegated || bp == s.breakpoints().end()) {
            continue;
        }
        auto want = static_cast<std::uint64_t>(std::max(0, bp->second.ignore_count));
        if (want != rec.ignore_known) {
            write_record_field(*proc, a, rec.index, offsetof(ompdbg_agent_site, ignore), want, 8);
            rec.ignore_known = want;
        }
    }
}

// Reads `passed` (summed over the shards, read in one piece) and `ignore` of every record
// in use; the hits the agent handled without a stop become the breakpoints' (gdb counts an
// ignored hit as a hit), and what is left of a delegated ignore count is the breakpoint's
// again. The process may be running (a poll while waiting): the counters only grow, so a
// later read adds the rest.
void collect_fast_counters(session& s) {
    // The lines of the hits counted below first; a drain has forgotten the memory cache.
    bool fresh = drain_fast_output(s);
    auto* a = loaded_agent(s);
    if (a == nullptr || a->fast.empty()) {
        return;
    }
    auto* proc = s.process();
    try {
        if (!fresh) {
            proc->forget_cached_memory();   // the agent's threads wrote since the last stop
        }
        auto shards = read_shards(*proc, *a);
        if (shards.empty()) {
            return;
        }
        for (auto& [site, rec] : a->fast) {
            std::uint64_t passed = passed_of(shards, rec.index);
            std::uint64_t ignore = 0;
            if (proc->try_read_memory(virt_addr(record_addr(*a, rec.index) + offsetof(ompdbg_agent_site, ignore)),
                                      std::as_writable_bytes(std::span(&ignore, 1))) != sizeof ignore) {
                continue;
            }
            auto bp = s.breakpoints().find(rec.breakpoint);
            if (bp == s.breakpoints().end()) {
                rec.passed_seen = passed;
                continue;
            }
            if (passed > rec.passed_seen) {
                bp->second.hit_count += static_cast<int>(passed - rec.passed_seen);
                rec.passed_seen = passed;
            }
            if (rec.delegated && ignore < rec.ignore_known) {
                // The agent ignored hits: taken off what the breakpoint has now, which may
                // differ from the record (set by the user, or a hit ignored by ompdbg since
                // the record was written: push_ignore_counts writes that).
                auto ignored = static_cast<int>(rec.ignore_known - ignore);
                bp->second.ignore_count = std::max(0, bp->second.ignore_count - ignored);
            }
            if (rec.delegated) {
                rec.ignore_known = ignore;
            }
        }
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "fast breakpoints: reading the agent's counters: {}", e.what());
    }
}

void push_fast_ignore_counts(session& s) {
    if (auto* a = loaded_agent(s)) {
        try {
            push_ignore_counts(s, *a);
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "fast breakpoints: writing ignore counts: {}", e.what());
        }
    }
}

bool fast_site_ignores(session& s, std::uint64_t addr) {
    auto* a = loaded_agent(s);
    if (a == nullptr) {
        return false;
    }
    auto it = a->fast.find(addr);
    if (it == a->fast.end() || !it->second.delegated) {
        return false;
    }
    auto bp = s.breakpoints().find(it->second.breakpoint);
    return bp != s.breakpoints().end() && bp->second.ignore_count > 0;
}

bool fast_is_exit_sync_site(session& s, std::uint64_t addr) {
    auto* a = loaded_agent(s);
    return a != nullptr && a->sync_planted && addr == a->sync;
}

bool fast_on_internal_breakpoint(session& s, std::uint64_t addr) {
    if (!fast_is_exit_sync_site(s, addr)) {
        return false;
    }
    collect_fast_counters(s);
    return true;
}

}  // namespace ompdbg::debugger
