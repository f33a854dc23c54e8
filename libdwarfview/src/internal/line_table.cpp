#include "internal/line_table.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include <dwarf.h>

namespace ompdbg::dwarf::internal {

line_table::line_table(Dwarf_Die cudie) {
    Dwarf_Lines* lines = nullptr;
    std::size_t n = 0;
    if (dwarf_getsrclines(&cudie, &lines, &n) != 0) {
        return;
    }
    rows_.reserve(n);
    Dwarf_Attribute attr;
    const char* comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr));
    std::map<const char*, const char*> absolute;   // libdw's relative name -> joined copy
    std::size_t seq_start = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Dwarf_Line* l = dwarf_onesrcline(lines, i);
        if (l == nullptr) {
            continue;
        }
        line_row r{};
        Dwarf_Addr a = 0;
        dwarf_lineaddr(l, &a);
        r.addr = a;
        r.file = dwarf_linesrc(l, nullptr, nullptr);
        if (r.file == nullptr) {
            r.file = "";
        } else if (r.file[0] != '/' && r.file[0] != '\0' && comp_dir != nullptr && comp_dir[0] == '/') {
            // libdw joins the file's directory entry, which may itself be relative to comp_dir.
            auto [it, fresh] = absolute.try_emplace(r.file, nullptr);
            if (fresh) {
                it->second = joined_paths_.emplace_back(std::string(comp_dir) + "/" + r.file).c_str();
            }
            r.file = it->second;
        }
        dwarf_lineno(l, &r.line);
        dwarf_linecol(l, &r.column);
        dwarf_linebeginstatement(l, &r.is_stmt);
        dwarf_lineendsequence(l, &r.end_sequence);
        dwarf_lineprologueend(l, &r.prologue_end);
        dwarf_linediscriminator(l, &r.discriminator);
        rows_.push_back(r);
        if (r.end_sequence) {
            std::size_t end = rows_.size() - 1;
            if (end > seq_start) {
                seqs_.push_back(sequence{rows_[seq_start].addr, r.addr, seq_start, end});
                mark_rows_gdb_drops(seq_start, end);
            }
            seq_start = rows_.size();
        }
    }
    // A sequence without its end row (corrupt table): drop the dangling rows.
    rows_.resize(seq_start);
    std::sort(seqs_.begin(), seqs_.end(),
              [](const sequence& a, const sequence& b) { return a.lo < b.lo; });
}

void line_table::mark_rows_gdb_drops(std::size_t first, std::size_t end) {
    // Rows kept so far per file (by name: DWARF 5 lists the unit's file twice), newest last.
    std::map<std::string_view, std::vector<std::size_t>> kept;
    const char* last_file = nullptr;
    std::uint64_t last_addr = 0;
    int last_line = 0;
    int disc_line = -1;                // the line the discriminator flag is about
    bool line_had_discriminator = false;
    auto drop_trailing = [&](const char* file, std::uint64_t addr) {
        if (file == nullptr) {
            return;
        }
        auto& rows = kept[file];
        while (!rows.empty() && rows_[rows.back()].addr == addr) {
            rows_[rows.back()].gdb_dropped = true;
            rows.pop_back();
        }
    };
    for (std::size_t i = first; i <= end; ++i) {
        line_row& r = rows_[i];
        bool file_changed = last_file == nullptr || std::string_view(last_file) != r.file;
        if (r.end_sequence) {
            drop_trailing(last_file, r.addr);
            break;
        }
        if (r.line != disc_line) {
            disc_line = r.line;
            line_had_discriminator = false;
        }
        line_had_discriminator = line_had_discriminator || r.discriminator != 0;
        bool ignore = (file_changed && last_file != nullptr && r.addr == last_addr && !r.is_stmt) || r.line == 0;
        last_addr = r.addr;
        if (ignore) {
            r.gdb_dropped = true;
            continue;
        }
        if (file_changed) {
            drop_trailing(last_file, r.addr);
        }
        if (!file_changed && r.line == last_line && line_had_discriminator) {
            r.gdb_dropped = true;   // not recorded: the same line again
        } else {
            kept[r.file].push_back(i);
        }
        last_file = r.file;
        last_line = r.line;
    }
}

std::optional<std::size_t> line_table::row_at(std::uint64_t addr) const {
    auto it = std::upper_bound(seqs_.begin(), seqs_.end(), addr,
                               [](std::uint64_t a, const sequence& s) { return a < s.lo; });
    // Sequences may be empty or (rarely) nested; look at a few preceding ones.
    for (int tries = 0; it != seqs_.begin() && tries < 4; ++tries) {
        --it;
        if (addr >= it->lo && addr < it->hi) {
            auto first = rows_.begin() + static_cast<std::ptrdiff_t>(it->first);
            auto end = rows_.begin() + static_cast<std::ptrdiff_t>(it->end);
            auto r = std::upper_bound(first, end, addr,
                                      [](std::uint64_t a, const line_row& row) { return a < row.addr; });
            if (r == first) {
                return std::nullopt;
            }
            --r;
            // gdb: among rows at one address, prefer an is_stmt one.
            auto best = r;
            while (!best->is_stmt && best != first && (best - 1)->addr == best->addr) {
                --best;
            }
            if (!best->is_stmt) {
                best = r;
            }
            return static_cast<std::size_t>(best - rows_.begin());
        }
    }
    return std::nullopt;
}

std::pair<std::size_t, std::size_t> line_table::sequence_of(std::size_t i) const {
    for (auto& s : seqs_) {
        if (i >= s.first && i <= s.end) {
            return {s.first, s.end};
        }
    }
    return {i, i + 1};
}

std::vector<line_row> line_table::rows_in(std::uint64_t lo, std::uint64_t hi) const {
    std::vector<line_row> out;
    for (auto& s : seqs_) {
        if (s.hi <= lo || s.lo >= hi) {
            continue;
        }
        for (std::size_t i = s.first; i < s.end; ++i) {
            if (rows_[i].addr >= lo && rows_[i].addr < hi) {
                out.push_back(rows_[i]);
            }
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const line_row& a, const line_row& b) { return a.addr < b.addr; });
    return out;
}

line_entry line_table::to_entry(const line_row& r) {
    line_entry e;
    e.addr = r.addr;
    e.file = r.file;
    e.line = r.line;
    e.column = r.column;
    e.is_stmt = r.is_stmt;
    e.end_sequence = r.end_sequence;
    e.prologue_end = r.prologue_end;
    return e;
}

}  // namespace ompdbg::dwarf::internal
