#pragma once
// The tokens of the expression language (expr_lex.cpp makes them, expr_parse.cpp reads them).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::dwarf::detail {

struct token {
    enum class kind { end, number, floating, character, string, ident, dollar, punct } k = kind::end;
    std::string text;            ///< identifier / punctuator / number as written / $-name
    std::size_t pos = 0;         ///< offset in the input (for "near `...'")
    std::uint64_t ival = 0;
    long double fval = 0;
    std::string int_type;        ///< literal's type: "int", "long", "unsigned int", ...
};

/// The tokens of `in`, the last of kind end; throws "Invalid character ..." and gdb's other
/// lexical errors.
std::vector<token> tokenize(std::string_view in);

}  // namespace ompdbg::dwarf::detail
