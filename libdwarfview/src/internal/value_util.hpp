#pragma once
// Helpers shared by the evaluator and the formatter: builtin C types, reading scalars out
// of a value's bytes (bitfields included), building values from numbers.

#include <cstdint>
#include <string_view>

#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf::detail {

/// gdb's builtin C types ("int", "unsigned long", "double", "char", "bool", "void"...),
/// normalised spelling ("long int" → "long"); nullopt for an unknown name.
std::optional<type> builtin_type(std::string_view name);
type int_type();
type long_type();
type ulong_type();
type double_type();
type char_type();
type bool_type();

/// gdb's default `max-value-size`: larger values are refused rather than read.
inline constexpr std::uint64_t max_value_size = 65536;
/// Throws gdb's "value requires N bytes, which is more than max-value-size".
void check_value_size(std::uint64_t n);

/// Loads the bytes of a lazy lvalue (address set, bytes empty) through the context.
void fetch(value& v, eval_context& ctx);

/// The raw little-endian integer in `v` (bitfields extracted, not sign-extended), and its
/// width in bits.
std::uint64_t raw_bits(const value& v);
unsigned bit_width(const value& v);
/// The value as an integer, sign-extended when its type is signed.
std::int64_t to_int(const value& v);
bool is_signed(const type& t);
/// Floating value (float, double, long double) as long double.
long double to_float(const value& v);

/// A floating value truncated toward zero to 64 bits, saturating (no UB on overflow/NaN).
std::uint64_t float_to_bits(long double f);

bool is_integral(const type& t);   ///< int, char, bool, enum (after typedef/cv)
bool is_floating(const type& t);
bool is_pointer(const type& t);

/// A non-lvalue of integer/pointer type `t` holding `v` truncated to t.size().
value make_int(const type& t, std::uint64_t v);
value make_float(const type& t, long double v);

/// References are transparent in expressions: the referred object as an lvalue.
value deref_reference(const value& v, eval_context& ctx);
/// Part of `parent` (already fetched) of type `t` at `byte_off`: sliced from its bytes,
/// and an lvalue when the parent is one.
value component(const value& parent, const type& t, std::uint64_t byte_off);
/// The member `m` of a struct/union value (bitfields keep their storage bytes).
value member_value(const value& parent, const member& m);

/// An lvalue of type `t` at `addr` (bytes read lazily by fetch).
value lvalue_at(const type& t, std::uint64_t addr);

}  // namespace ompdbg::dwarf::detail
