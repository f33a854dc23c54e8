// FILE:LINE lookups that follow gdb's per-file line tables (rows gdb drops are skipped):
// where `info line FILE:LINE` says a line starts, and which file a location at an address
// names when several files have rows there.
#include "ompdbg/dwarf/debug_info.hpp"

#include "internal/debug_info_impl.hpp"

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

}  // namespace ompdbg::dwarf
