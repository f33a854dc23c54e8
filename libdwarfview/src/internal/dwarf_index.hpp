#pragma once
// The name index of a debug_info: one walk over every unit's DIEs records functions
// (concrete definitions and inlined copies), global variables, named types and the
// qualified name of every named DIE inside namespaces and classes.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf::internal {

struct function_record {
    Dwarf_Die die;          ///< subprogram with code, or inlined_subroutine
    Dwarf_Die frame_base;   ///< the subprogram holding DW_AT_frame_base
    bool inlined;
    std::string name;       ///< qualified
};

struct global_record {
    Dwarf_Die die;
    std::string name;       ///< qualified
    bool has_location;      ///< DW_AT_location or DW_AT_const_value (a definition)
};

struct type_record {
    Dwarf_Die die;
    std::string name;       ///< qualified; base types normalised (see normalize_type_name)
    int tag;
    bool declaration;
};

class dwarf_index {
public:
    /// Walks every unit of `dwarf` once.
    explicit dwarf_index(Dwarf* dwarf);
    /// Walks one compile unit only (see unit_filter: valid when no DIE of the unit refers
    /// to another unit, so that its names are those the whole file's index gives).
    explicit dwarf_index(Dwarf_Die unit);

    const std::vector<function_record>& functions() const { return functions_; }
    const std::vector<global_record>& globals() const { return globals_; }
    const std::vector<type_record>& types() const { return types_; }

    /// Indexes of functions whose qualified name, any "::"-suffix of it, the name without
    /// template arguments, or the linkage name equals `key`.
    std::vector<std::size_t> functions_named(const std::string& key) const;
    std::vector<std::size_t> globals_named(const std::string& key) const;
    std::vector<std::size_t> types_named(const std::string& key) const;

    /// Qualified name of a DIE (following specification/abstract_origin), or its plain name.
    std::string qualified_name(Dwarf_Die die) const;

private:
    /// Qualified names and lookup keys of the functions, once every DIE is walked.
    void name_functions();
    void walk(Dwarf_Die parent, const std::string& prefix, const Dwarf_Die* subprogram,
              int depth);

    std::vector<function_record> functions_;
    std::vector<global_record> globals_;
    std::vector<type_record> types_;
    std::unordered_map<const void*, std::string> qualified_;
    std::unordered_multimap<std::string, std::size_t> function_keys_;
    std::unordered_multimap<std::string, std::size_t> global_keys_;
    std::unordered_multimap<std::string, std::size_t> type_keys_;
};

/// The qualified name dwarf_index::qualified_name gives `die`, computed by walking down from
/// its unit to it instead of indexing the whole file: function_chain_at (backtraces) needs
/// the names of a few DIEs, never the index of libc's 88k types.
std::string qualified_name_without_index(Dwarf_Die die);

/// Canonical spelling of C integer type names so that "unsigned long", "long unsigned int"
/// and "unsigned long int" compare equal; other names come back unchanged (spaces trimmed).
std::string normalize_type_name(std::string_view name);
/// The name without a trailing template argument list ("max<int>" → "max").
std::string strip_template_args(const std::string& name);

}  // namespace ompdbg::dwarf::internal
