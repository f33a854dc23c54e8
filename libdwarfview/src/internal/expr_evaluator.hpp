#pragma once
// The expression evaluator's class, shared by the files that define its parts: expr_eval.cpp
// (dispatch, names, $ values), expr_operators.cpp, expr_lvalues.cpp and expr_cast.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "internal/expr_ast.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf::detail {

[[noreturn]] inline void not_a_number() {
    error::send("Argument to arithmetic operation not a number or boolean.");
}

inline bool is_struct(const type& t) {
    auto k = t.strip_cv_typedef().kind();
    return k == type_kind::structure || k == type_kind::class_ || k == type_kind::union_;
}

// Registers gdb knows by name on x86-64 and the types it gives them. `cplus`: gdb's C++
// printer spells $pc's empty parameter list "(void)", its C printer "()".
std::optional<type> register_type(std::string_view name, bool cplus = false);

bool all_digits(std::string_view s);

class evaluator {
public:
    explicit evaluator(eval_context& ctx) : ctx_(ctx) {}

    // expr_eval.cpp
    value eval(const expression& e);
    value rv(const expression& e);
    // expr_cast.cpp
    value cast(value v, const type& to);

private:
    // expr_eval.cpp
    value call(const expression& e, const std::optional<type>& forced_return);
    value identifier(const std::string& raw);
    value history(int index);
    value dollar(const std::string& name);
    value coerce(value v);
    value lvalue_of(const expression& e);

    // expr_operators.cpp
    value boolean_result(bool b);
    value unary(const expression& e);
    type promote(const type& t);
    type arith_type(const type& a, const type& b);
    value binary(const expression& e);
    value binop(const std::string& op, const value& a, const value& b);
    static long double int_as_float(const value& v);
    template <typename T>
    static bool compare(const std::string& op, T x, T y);
    static std::uint64_t element_size(const type& ptr);
    value pointer_op(const std::string& op, const value& a, const value& b, bool pa, bool pb,
                     bool cmp);

    // expr_lvalues.cpp
    std::uint64_t bitfield_bits(const value& nv, unsigned w, std::uint64_t field_mask);
    value store(const value& target, const value& v);
    value assign(const expression& e);
    std::optional<value> find_member(const value& obj, const type& s, const std::string& name);
    value member_access(const expression& e);
    value index(const expression& e);

    eval_context& ctx_;
};

}  // namespace ompdbg::dwarf::detail
