#pragma once
/// gdb's `printf "FORMAT", EXPR...` (and `dprintf`): the format string with its C escapes,
/// split into literal text and conversions, each conversion formatted from a value of the
/// program the way gdb's printf_command does (an int unless a length modifier says long,
/// `%s` reads a C string from the target, `%p` is `0x...` or `(nil)`).

#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::debugger {

/// One piece of a format: literal text (conversion 0) or one `%...` conversion.
struct printf_piece {
    std::string text;              ///< literal text, or the conversion's flags/width/precision
    std::string length;            ///< h l ll L z j t, or empty (gdb 13 refuses hh)
    char conversion = 0;           ///< d i u o x X c s f F e E g G a A p; 0 for literal text
};

struct printf_request {
    std::vector<printf_piece> pieces;
    std::vector<std::string> expressions;   ///< one for each conversion, in order
};

/// Parses `"FORMAT", E1, E2...` as gdb does: throws ompdbg::error with gdb's messages
/// ("Bad format string, missing '\"'", "Wrong number of arguments for specified
/// format-string", "Unrecognized format specifier 'q' in printf"...).
printf_request parse_printf(std::string_view args);

/// Formats one conversion of `piece` from `v` (reading strings behind pointers through ctx).
std::string format_printf_value(const printf_piece& piece, const dwarf::value& v, dwarf::eval_context& ctx);

/// The whole text: every expression evaluated in ctx, in order.
std::string format_printf(const printf_request& request, dwarf::eval_context& ctx);

}  // namespace ompdbg::debugger
