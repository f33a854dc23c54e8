// debug_info's line queries: the row at an address and the range of its line, the
// addresses of FILE:LINE and a function's rows; and the lookups that follow gdb's per-file
// line tables (rows gdb drops are skipped): where `info line FILE:LINE` says a line starts,
// and which file a location at an address names when several files have rows there.
#include "ompdbg/dwarf/debug_info.hpp"

#include "internal/debug_info_impl.hpp"
#include "internal/die_util.hpp"
#include "internal/line_table.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace ompdbg::dwarf {

using namespace internal;

std::optional<line_entry> debug_info::line_start(std::string_view file, int line) const {
    impl_->load_cus();
    const internal::line_row* best = nullptr;
    for (std::size_t c = 0; c < impl_->cus.size(); ++c) {
        for (const auto& r : impl_->lines(c).rows()) {
            if (r.end_sequence || !r.is_stmt || r.gdb_dropped || r.line < line || !file_matches(r.file, file)) {
                continue;
            }
            if (best == nullptr || r.line < best->line || (r.line == best->line && r.addr < best->addr)) {
                best = &r;
            }
        }
    }
    if (best == nullptr) {
        return std::nullopt;
    }
    return line_table::to_entry(*best);
}

std::optional<debug_info::line_span> debug_info::gdb_line_span(std::uint64_t addr) const {
    auto loc = impl_->locate_row(addr);
    if (!loc) {
        return std::nullopt;
    }
    const auto& rows = loc->table->rows();
    auto [first, end] = loc->table->sequence_of(loc->index);
    if (end >= rows.size()) {
        return std::nullopt;
    }
    // The last kept row at or below addr (rows of a sequence ascend by address).
    std::size_t i = loc->index;
    while (i < end && i + 1 < end && rows[i + 1].addr <= addr) {
        ++i;
    }
    while (i > first && rows[i].gdb_dropped) {
        --i;
    }
    if (rows[i].gdb_dropped || rows[i].addr > addr) {
        return std::nullopt;
    }
    for (std::size_t j = i; !rows[i].is_stmt && j > first && rows[j - 1].addr == rows[i].addr;) {
        --j;
        if (!rows[j].gdb_dropped && rows[j].is_stmt) {
            i = j;
        }
    }
    std::uint64_t next = rows[end].addr;
    for (std::size_t j = i + 1; j < end; ++j) {
        if (!rows[j].gdb_dropped && rows[j].addr > rows[i].addr) {
            next = rows[j].addr;
            break;
        }
    }
    return line_span{line_table::to_entry(rows[i]), next};
}

std::optional<line_entry> debug_info::row_of_line_at(std::uint64_t addr, std::string_view file, int line) const {
    auto cu = impl_->cu_for(addr);
    if (!cu) {
        return std::nullopt;
    }
    for (const auto& r : impl_->lines(*cu).rows()) {
        if (r.addr == addr && !r.end_sequence && r.line == line && file_matches(r.file, file)) {
            return line_table::to_entry(r);
        }
    }
    return std::nullopt;
}

std::optional<debug_info::impl::located_row> debug_info::impl::locate_row(std::uint64_t addr) {
    auto cu = cu_for(addr);
    if (!cu) {
        return std::nullopt;
    }
    const auto& lt = lines(*cu);
    auto r = lt.row_at(addr);
    if (!r) {
        return std::nullopt;
    }
    return located_row{&lt, *r};
}

std::optional<line_entry> debug_info::line_at(std::uint64_t addr) const {
    auto loc = impl_->locate_row(addr);
    if (!loc) {
        return std::nullopt;
    }
    return line_table::to_entry(loc->table->rows()[loc->index]);
}

std::optional<addr_range> debug_info::line_range_at(std::uint64_t addr) const {
    auto loc = impl_->locate_row(addr);
    if (!loc) {
        return std::nullopt;
    }
    const auto& lt = *loc->table;
    const std::size_t row = loc->index;
    const auto& rows = lt.rows();
    auto [first, end] = lt.sequence_of(row);
    const line_row& cur = rows[row];
    auto same_line = [&](const line_row& o) {
        return o.line == cur.line && std::string_view(o.file) == cur.file;
    };
    std::size_t lo = row;
    while (lo > first && same_line(rows[lo - 1])) {
        --lo;
    }
    // Forward: rows of the same line, and rows that are not statements (gdb steps on
    // through both), end the range at the next statement of another line.
    std::size_t hi = row + 1;
    while (hi < end && (rows[hi].addr <= addr || same_line(rows[hi]) || !rows[hi].is_stmt)) {
        ++hi;
    }
    return addr_range{rows[lo].addr, rows[hi].addr};
}

std::optional<line_entry> debug_info::first_row_of_line(std::uint64_t cu_addr, std::string_view file,
                                                        int line) const {
    auto cu = impl_->cu_for(cu_addr);
    if (!cu) {
        return std::nullopt;
    }
    const line_row* best = nullptr;
    for (auto& r : impl_->lines(*cu).rows()) {
        if (!r.end_sequence && r.is_stmt && r.line == line && file == r.file && (!best || r.addr < best->addr)) {
            best = &r;
        }
    }
    if (best == nullptr) {
        return std::nullopt;
    }
    return line_table::to_entry(*best);
}

std::pair<std::vector<std::uint64_t>, int> debug_info::addresses_for_line(std::string_view file, int line) const {
    impl_->load_cus();
    struct cand {
        std::uint64_t addr;
        std::size_t cu;
    };
    std::map<int, std::vector<cand>> by_line;   // lines >= `line` with code
    for (std::size_t c = 0; c < impl_->cus.size(); ++c) {
        for (auto& r : impl_->lines(c).rows()) {
            if (r.end_sequence || !r.is_stmt || r.gdb_dropped || r.line < line || !file_matches(r.file, file)) {
                continue;
            }
            by_line[r.line].push_back(cand{r.addr, c});
        }
    }
    if (by_line.empty()) {
        return {{}, line};
    }
    auto& [used, cands] = *by_line.begin();
    // One address per innermost block (gdb keeps the first location of each block).
    std::map<const void*, std::uint64_t> per_block;
    std::vector<std::uint64_t> no_block;
    for (auto& c : cands) {
        auto chain = impl_->scope_chain(impl_->cus[c.cu]->die, c.addr);
        if (chain.empty()) {
            no_block.push_back(c.addr);
            continue;
        }
        auto [it, inserted] = per_block.emplace(die_key(chain.back()), c.addr);
        if (!inserted) {
            it->second = std::min(it->second, c.addr);
        }
    }
    std::set<std::uint64_t> result(no_block.begin(), no_block.end());
    for (auto& [key, addr] : per_block) {
        std::uint64_t a = addr;
        auto chain = function_chain_at(a);
        const function* outer = nullptr;
        for (auto& f : chain) {
            if (!f.is_inlined) {
                outer = &f;
            }
        }
        if (outer != nullptr) {
            // gdb 13 slides a line without code to the next line that has some, even into
            // the next function (`break x.c:1` stops in the first function of x.c).
            // A line in the prologue moves past it, as `break FUNC` would.
            if (a < outer->breakpoint_pc && outer->contains(outer->breakpoint_pc)) {
                a = outer->breakpoint_pc;
            }
        }
        result.insert(a);
    }
    return {std::vector<std::uint64_t>(result.begin(), result.end()), used};
}

std::vector<line_entry> debug_info::line_rows_of_function(const function& fn) const {
    std::vector<line_entry> out;
    auto cu = impl_->cu_of_die(fn.die);
    if (!cu) {
        return out;
    }
    const auto& lt = impl_->lines(*cu);
    for (auto& [lo, hi] : fn.ranges) {
        for (auto& r : lt.rows_in(lo, hi)) {
            out.push_back(line_table::to_entry(r));
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const line_entry& a, const line_entry& b) { return a.addr < b.addr; });
    return out;
}
}  // namespace ompdbg::dwarf
