#pragma once
/// A value-semantic handle over a DWARF type DIE (libdw). Copyable; valid as long as the
/// elf_file it came from lives. Used by the expression evaluator, the value formatter and
/// by plugin callbacks that ask type sizes and field offsets (OMPD, MQS, DMPL).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf {

class type;
struct synthetic_type;
struct synthetic_field;

enum class type_kind {
    base, pointer, reference, rvalue_reference, structure, class_, union_, enumeration,
    array, typedef_, const_, volatile_, restrict_, function, void_, ptr_to_member, unknown
};

enum class base_encoding { signed_int, unsigned_int, signed_char, unsigned_char, boolean, floating, other };

struct member {
    std::string name;            ///< empty for anonymous members
    std::uint64_t byte_offset;   ///< offset of the containing storage unit / member
    std::optional<std::uint32_t> bit_size;    ///< set for bitfields
    std::uint32_t bit_offset = 0;             ///< bitfields: bit position from the LSB of byte_offset
    bool is_base_class = false;               ///< C++ inheritance (DW_TAG_inheritance)
    bool is_static = false;                   ///< C++ static data member (no storage in object)
    bool is_artificial = false;               ///< compiler-made (_vptr.klass)
    /// DW_ACCESS_public/protected/private (1/2/3) resolved with the parent's default
    /// (private in a `class`, public otherwise).
    std::uint8_t accessibility = 1;
    type get_type() const;
    std::optional<Dwarf_Die> type_die;        ///< the member's DW_AT_type DIE (none: void)
    /// The member's type when the struct has no DIE (type::record_of); null otherwise.
    std::shared_ptr<const type> synthetic;
};

struct enumerator {
    std::string name;
    std::int64_t value;
};

class type {
public:
    /// A handle for `die` (any type DIE). A default-constructed type is `void`.
    type() = default;
    explicit type(Dwarf_Die die) : die_(die), has_die_(true) {}

    /// Types with no DIE, made by the expression evaluator (literals, `&x`, casts to
    /// `T *`, `sizeof`): a base type ("int", 4, signed_int), a pointer/reference to `t`,
    /// or an array of `count` elements of `t`. They answer every query below; `die()` is
    /// nullptr for them.
    static type make_base(std::string name, std::uint64_t size, base_encoding enc);
    static type pointer_to(const type& t);
    static type reference_to(const type& t);
    static type array_of(const type& t, std::uint64_t count);
    /// `const T` / `volatile T` (casts such as `(const char *)p`).
    static type const_of(const type& t);
    static type volatile_of(const type& t);
    /// A function type "RET (PARAMS)" (for casts to function pointers, `$pc`'s
    /// `void (*)()`): unprototyped when `prototyped` is false.
    static type function_of(const type& ret, std::vector<type> params, bool varargs,
                            bool prototyped);
    /// A struct or union with no DIE (gdb's own types, such as $_siginfo's `siginfo`):
    /// `fields` at their byte offsets, `size` bytes, named `tag` (empty: anonymous).
    static type record_of(type_kind kind, std::string tag, std::uint64_t size,
                          std::vector<synthetic_field> fields);
    /// The one `void` type (same as a default-constructed type).
    static type void_type() { return type(); }
    bool is_synthetic() const { return syn_ != nullptr; }

    type_kind kind() const;
    /// The type as gdb spells it: "int", "struct point", "char *", "int [10]",
    /// "const char *", "int (*)(int, int)", "ns::klass".
    std::string name() const;
    /// Size in bytes (pointers 8, arrays count*element); 0 for void/functions/incomplete.
    std::uint64_t size() const;
    /// Follows typedef / const / volatile / restrict to the underlying type.
    type strip_cv_typedef() const;
    /// Pointee (pointer, reference), element (array), aliased (typedef, cv), underlying
    /// (enum with DW_AT_type), return type (function). nullopt when there is none (void).
    std::optional<type> target() const;
    /// Array dimensions, outermost first ("int [2][3]" → {2, 3}); 0 for an unknown bound.
    std::vector<std::uint64_t> array_counts() const;
    /// Data members in declaration order, base classes first (for structs/classes/unions).
    std::vector<member> members() const;
    std::vector<enumerator> enumerators() const;
    /// Functions: parameter types in order; `is_varargs` for "...", `is_prototyped` is
    /// false for K&R C declarations (gdb prints "int ()").
    std::vector<type> parameters() const;
    bool is_varargs() const;
    bool is_prototyped() const;
    /// Integer-like encoding of the type after strip_cv_typedef: base types by
    /// DW_AT_encoding, enums by their underlying type (unsigned unless a value is
    /// negative), pointers unsigned_int, anything else `other`.
    base_encoding encoding() const;
    bool is_char() const;        ///< char, signed char, unsigned char (1 byte char encodings)
    bool is_pointer_like() const;
    bool is_aggregate() const;   ///< struct, class, union, array
    bool is_void() const { return (!has_die_ && !syn_) || kind() == type_kind::void_; }
    bool is_declaration() const; ///< incomplete type (DW_AT_declaration)
    bool is_const() const;       ///< top-level const (before typedefs are stripped)
    /// True when the type comes from a C++ compilation unit (names without the
    /// struct/union/enum keyword, references, `bool`).
    bool is_cplus() const;
    /// The tag name alone ("point" for `struct point`, "ns::klass"), empty when anonymous.
    std::string tag_name() const;

    const Dwarf_Die* die() const { return has_die_ ? &die_ : nullptr; }
    bool operator==(const type& other) const;

private:
    Dwarf_Die die_{};
    bool has_die_ = false;
    std::shared_ptr<const synthetic_type> syn_;
};

/// A field of a synthetic struct or union (type::record_of).
struct synthetic_field {
    std::string name;
    type field_type;
    std::uint64_t byte_offset = 0;
};

/// The description of a type that has no DIE (see type::make_base / pointer_to).
struct synthetic_type {
    type_kind kind = type_kind::base;
    std::string name;              ///< base types only
    std::uint64_t size = 0;
    base_encoding enc = base_encoding::other;
    type target;                   ///< pointer/reference/array element/function return
    std::uint64_t count = 0;       ///< arrays
    std::vector<type> params;      ///< functions
    bool varargs = false;
    bool prototyped = true;
    std::vector<synthetic_field> fields;   ///< structs and unions (record_of)
};

inline type member::get_type() const {
    return synthetic ? *synthetic : type_die ? type(*type_die) : type();
}

/// gdb's type of a function known only by its ELF symbol: `print` shows
/// "{<text variable, no debug info>} 0x401000 <_init>", `ptype` "<unknown return type> ()";
/// its value is the function's address, as a function's is.
type nodebug_function_type();
bool is_nodebug_function(const type& t);

}  // namespace ompdbg::dwarf
