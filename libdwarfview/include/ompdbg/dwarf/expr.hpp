#pragma once
/// The C/C++ expression language of print, set var, x, display, `break ... if`: parse into
/// an AST, evaluate against an eval_context. Supported: identifiers (locals, args, globals,
/// statics, __thread, functions), integer/char/float/string literals, registers ($rip,
/// $sp, $pc, $eax), convenience history ($, $1), unary - ! ~ * & , binary arithmetic,
/// comparison, logical, bitwise, assignment (=, +=...), member access . and ->, indexing,
/// casts to named types ((int)x, (struct foo *)p, (char)c), sizeof, ::scoping, `@` arrays.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf {

/// A call of a function of the program, as the evaluator asks the debugger to make it.
struct function_call {
    std::uint64_t address = 0;      ///< entry point of the callee
    std::string name;               ///< as gdb names it in messages ("sq", "at 0x0x0")
    std::vector<value> args;        ///< converted to the parameter types, bytes filled
    type return_type;               ///< void: no value
    bool is_variadic = false;       ///< AL holds the number of xmm registers used
};

/// What evaluation needs from the debugger (implemented in apps/ over the selected frame).
class eval_context {
public:
    virtual ~eval_context() = default;
    /// A variable visible in the selected frame (local, arg, global, static, TLS) as a
    /// value (lvalue where it lives); nullopt when no such symbol.
    virtual std::optional<value> lookup_variable(std::string_view name) = 0;
    /// A function or minimal symbol by name, as a value of function type or an address.
    virtual std::optional<value> lookup_function(std::string_view name) = 0;
    /// A named type for casts and sizeof ("int", "struct foo", "foo *" is built by caller).
    virtual std::optional<type> lookup_type(std::string_view name) = 0;
    /// Register of the selected frame by gdb name ("rip", "pc", "sp", "eax").
    virtual std::optional<std::uint64_t> read_register(std::string_view name) = 0;
    virtual void write_register(std::string_view name, std::uint64_t v) = 0;
    /// Reads/writes target memory; throw "Cannot access memory at address 0x..".
    virtual void read_memory(std::uint64_t addr, std::span<std::byte> out) = 0;
    virtual void write_memory(std::uint64_t addr, std::span<const std::byte> data) = 0;
    /// Value of a DWARF register number in the selected frame (for register lvalues).
    virtual std::optional<std::uint64_t> read_dwarf_register(int regno) = 0;
    /// "<main+4>" symbolization for code pointers; empty string when unknown.
    virtual std::string symbolize(std::uint64_t addr) = 0;
    /// Value history: index > 0 is absolute ($1, $2); index <= 0 is relative to the last
    /// value ($ = 0, $$ = -1, $$3 = -3). nullopt when out of range.
    virtual std::optional<value> history(int index) { (void)index; return std::nullopt; }
    /// Number of values in the history (for gdb's "History has not yet reached $N.").
    virtual int history_size() { return 0; }
    /// An enumerator constant visible in the selected frame ("RED", "ns::RED") as a value
    /// of its enumeration type; nullopt when none.
    virtual std::optional<value> lookup_enumerator(std::string_view name) { (void)name; return std::nullopt; }
    /// Convenience variables ($foo): nullopt when never set (gdb then prints "void").
    virtual std::optional<value> convenience(std::string_view name) { (void)name; return std::nullopt; }
    virtual void set_convenience(std::string_view name, const value& v) { (void)name; (void)v; }
    /// Writes a register lvalue of a variable (DWARF number) in the selected frame.
    virtual void write_dwarf_register(int regno, std::uint64_t v);
    /// True when the selected frame's language is C++ (comparisons yield bool, true/false
    /// are literals).
    virtual bool language_cplus() { return false; }
    /// A warning gdb prints while evaluating and goes on ("Value does not fit in 3 bits."):
    /// the context shows it to the user as "warning: TEXT"; the default drops it.
    virtual void warn(std::string_view text) { (void)text; }
    /// Every function definition named `name` (C++ overloads); default: lookup_function's.
    virtual std::vector<value> lookup_functions(std::string_view name);
    /// Throws when no call can be made now (gdb checks this before the arguments): no
    /// process ("You can't do that without a process to debug."), calls forbidden.
    virtual void check_can_call();
    /// Runs `call` in the program and returns its result (a void value for void). Throws
    /// gdb's messages; default: "You can't do that without a process to debug."
    virtual value call_function(const function_call& call);
    /// Copies `bytes` into the program's memory for the next call (a string literal passed
    /// as `char *`) and returns its address; default throws as call_function.
    virtual std::uint64_t push_to_target(std::span<const std::byte> bytes);
};

/// Every enumerator constant of a DWARF file by name ("RED", and for C++ the qualified
/// "ns::RED" / "ns::color::RED" of enum classes), built on the first lookup. An
/// eval_context::lookup_enumerator can forward to one index per loaded module. `dwarf`
/// must outlive the index.
class enumerator_index {
public:
    explicit enumerator_index(Dwarf* dwarf);
    ~enumerator_index();
    enumerator_index(const enumerator_index&) = delete;
    enumerator_index& operator=(const enumerator_index&) = delete;
    /// A value of the enumeration type holding the constant; nullopt when unknown.
    std::optional<value> find(std::string_view name);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

struct expression;   // AST, opaque

/// Parses `text`; throws ompdbg::error with gdb's wording ("A syntax error in expression,
/// near `...'."). With a context, `(NAME) -x` is parsed as a cast when NAME is a type and
/// not a variable (as gdb's parser does); without one it is a subtraction.
std::shared_ptr<const expression> parse_expression(std::string_view text,
                                                   eval_context* ctx = nullptr);

/// `text` as a type name ("int", "unsigned long *", "struct point", "point_t",
/// "int (*)(int, int)", "ns::klass &"): nullopt when it is not a type (an expression).
/// Throws "No struct type named point." for `struct point` when unknown.
std::optional<type> parse_type(std::string_view text, eval_context& ctx);

/// Evaluates; throws ompdbg::error ("No symbol \"x\" in current context.",
/// "Cannot access memory at address 0x0", "Attempt to take address of value not located
/// in memory.", "Division by zero").
value evaluate(const expression& e, eval_context& ctx);
/// parse + evaluate.
value evaluate(std::string_view text, eval_context& ctx);

/// True when `v` is non-zero (conditions of `break ... if`).
bool is_true(const value& v);
/// The value as a 64-bit integer (pointers, integers, enums, bools, chars); throws otherwise.
std::int64_t as_integer(const value& v);

/// gdb's `ptype` and `whatis` text for an expression's type or a type name, with the
/// "type = " prefix ("type = struct point {\n    int x;\n    int y;\n}").
std::string ptype_text(const type& t);
std::string whatis_text(const type& t);
/// The commands: `text` is a type name or an expression. `whatis` on a typedef name
/// unrolls one level (gdb); `ptype` expands structs, unions and enums.
std::string ptype_command(std::string_view text, eval_context& ctx);
std::string whatis_command(std::string_view text, eval_context& ctx);

}  // namespace ompdbg::dwarf
