#pragma once
/// A value-semantic handle over a DWARF type DIE (libdw). Copyable; valid as long as the
/// elf_file it came from lives. Used by the expression evaluator, the value formatter and
/// by plugin callbacks that ask type sizes and field offsets (OMPD, MQS, DMPL).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf {

class type;

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
    type get_type() const;
    Dwarf_Die type_die;                       ///< the member's DW_AT_type DIE
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
    base_encoding encoding() const;
    bool is_char() const;        ///< char, signed char, unsigned char (1 byte char encodings)
    bool is_pointer_like() const;
    bool is_aggregate() const;   ///< struct, class, union, array
    bool is_void() const { return !has_die_ || kind() == type_kind::void_; }
    bool is_declaration() const; ///< incomplete type (DW_AT_declaration)

    const Dwarf_Die* die() const { return has_die_ ? &die_ : nullptr; }
    bool operator==(const type& other) const;

private:
    Dwarf_Die die_{};
    bool has_die_ = false;
};

inline type member::get_type() const { return type(type_die); }

}  // namespace ompdbg::dwarf
