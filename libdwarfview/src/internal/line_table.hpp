#pragma once
// The line table of one CU as sorted sequences of rows (libdw decodes; this keeps what the
// debugger asks: the row covering an address, the rows of a line, of a range).

#include <deque>
#include <string>
#include <cstdint>
#include <optional>
#include <vector>

#include <elfutils/libdw.h>

#include "ompdbg/dwarf/debug_info.hpp"

namespace ompdbg::dwarf::internal {

struct line_row {
    std::uint64_t addr;
    const char* file;            ///< absolute when the unit's comp_dir is; owned by libdw or the table
    int line;
    int column;
    bool is_stmt;
    bool end_sequence;
    bool prologue_end;
    unsigned discriminator;
    /// gdb's line table has no such row (see line_table::mark_rows_gdb_drops): a
    /// FILE:LINE location never resolves to it.
    bool gdb_dropped;
};

class line_table {
public:
    /// Decodes the line table of `cudie`; an empty table when it has none or it is corrupt.
    explicit line_table(Dwarf_Die cudie);

    const std::vector<line_row>& rows() const { return rows_; }
    /// Index of the row covering `addr` (the last row at or below it in its sequence, the
    /// is_stmt one among rows at the same address), nullopt outside every sequence.
    std::optional<std::size_t> row_at(std::uint64_t addr) const;
    /// [first, last) row indexes of the sequence holding row `i` (last = its end row).
    std::pair<std::size_t, std::size_t> sequence_of(std::size_t i) const;
    /// Every non-end row with address in [lo, hi), by address.
    std::vector<line_row> rows_in(std::uint64_t lo, std::uint64_t hi) const;

    static line_entry to_entry(const line_row& r);

private:
    /// Marks the rows gdb's DWARF reader leaves out of its per-file line tables: when the
    /// table switches to another file at the same address with a statement row (an
    /// inlined function of a header starting there), gdb ends the previous file's lines
    /// there and drops its rows at that address; a non-statement row of another file at
    /// the same address is ignored; a row of the same file and line as the row before is
    /// not recorded once the line had a non-zero discriminator (dwarf2/read.c
    /// lnp_state_machine::record_line, dwarf_record_line_p; buildsym_compunit::record_line).
    void mark_rows_gdb_drops(std::size_t first, std::size_t end);

    struct sequence {
        std::uint64_t lo, hi;
        std::size_t first, end;   // rows_[first .. end], rows_[end] is the end_sequence row
    };
    std::vector<line_row> rows_;
    /// comp_dir-joined names of the files whose line-table directory is relative
    /// (`gcc -g src/a.c`: directory "src"); a deque keeps their addresses.
    std::deque<std::string> joined_paths_;
    std::vector<sequence> seqs_;   // sorted by lo
};

}  // namespace ompdbg::dwarf::internal
