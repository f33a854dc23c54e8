#include "internal/std_printers.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <array>
#include <cstring>
#include <string_view>

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "internal/value_util.hpp"

namespace ompdbg::dwarf::detail {

namespace {

// libstdc++'s node headers (ABI-stable since gcc 5): the value follows the links.
constexpr std::uint64_t rb_node_value_offset = 32;     // color, parent, left, right
constexpr std::uint64_t rb_parent = 8, rb_left = 16, rb_right = 24;
constexpr std::uint64_t list_node_value_offset = 16;   // next, prev
constexpr std::uint64_t hash_node_value_offset = 8;    // next
// A corrupt or uninitialised container must not make `print` walk forever.
constexpr std::uint64_t max_walk = 1u << 20;

/// A member found by name in a type, its bases and its by-value struct/union members.
struct field {
    type t;
    std::uint64_t offset = 0;
};

std::optional<field> find_field(const type& t, std::string_view name, int depth = 0) {
    if (depth > 8) {
        return std::nullopt;
    }
    auto s = t.strip_cv_typedef();
    auto k = s.kind();
    if (k != type_kind::structure && k != type_kind::class_ && k != type_kind::union_) {
        return std::nullopt;
    }
    auto members = s.members();
    for (auto& m : members) {
        if (!m.is_static && !m.is_base_class && m.name == name) {
            return field{m.get_type(), m.byte_offset};
        }
    }
    for (auto& m : members) {
        if (m.is_static) {
            continue;
        }
        if (auto f = find_field(m.get_type(), name, depth + 1)) {
            f->offset += m.byte_offset;
            return f;
        }
    }
    return std::nullopt;
}

/// The base class whose type name starts with `prefix`, searched through bases and by-value
/// members (unique_ptr keeps its tuple in a member of a member).
std::optional<field> find_base(const type& t, std::string_view prefix, int depth = 0) {
    if (depth > 8) {
        return std::nullopt;
    }
    for (auto& m : t.strip_cv_typedef().members()) {
        if (m.is_static) {
            continue;
        }
        if (m.is_base_class && m.get_type().strip_cv_typedef().tag_name().starts_with(prefix)) {
            return field{m.get_type(), m.byte_offset};
        }
        if (auto f = find_base(m.get_type(), prefix, depth + 1)) {
            f->offset += m.byte_offset;
            return f;
        }
    }
    return std::nullopt;
}

/// Template type argument `index` (DW_TAG_template_type_parameter) of a class type.
std::optional<type> template_arg(const type& t, int index) {
    auto s = t.strip_cv_typedef();
    const Dwarf_Die* die = s.die();
    if (die == nullptr) {
        return std::nullopt;
    }
    Dwarf_Die d = *die;
    Dwarf_Die child;
    if (dwarf_child(&d, &child) != 0) {
        return std::nullopt;
    }
    int seen = 0;
    do {
        if (dwarf_tag(&child) != DW_TAG_template_type_parameter) {
            continue;
        }
        if (seen++ != index) {
            continue;
        }
        Dwarf_Attribute attr;
        Dwarf_Die arg;
        if (dwarf_attr_integrate(&child, DW_AT_type, &attr) == nullptr || dwarf_formref_die(&attr, &arg) == nullptr) {
            return type();   // void
        }
        return type(arg);
    } while (dwarf_siblingof(&child, &child) == 0);
    return std::nullopt;
}

class layout_reader {
public:
    layout_reader(const value& v, eval_context& ctx) : ctx_(ctx), base_(v.address.value_or(0)), bytes_(v.bytes) {}

    /// The object's own bytes (it may be a non-lvalue, e.g. a value in history).
    std::uint64_t own_u64(std::uint64_t off) const { return own(off, 8); }
    std::uint64_t own(std::uint64_t off, std::size_t n) const {
        std::uint64_t out = 0;
        if (off + n <= bytes_.size()) {
            std::memcpy(&out, bytes_.data() + off, n);
            return out;
        }
        if (base_ == 0) {
            error::send("Cannot access memory at address 0x0");
        }
        return mem(base_ + off, n);
    }
    std::uint64_t mem(std::uint64_t addr, std::size_t n = 8) const {
        std::array<std::byte, 8> b{};
        ctx_.read_memory(addr, std::span<std::byte>(b.data(), n));
        std::uint64_t out = 0;
        std::memcpy(&out, b.data(), n);
        return out;
    }
    /// A member of the object at `off`, as a value (an lvalue when the object is one).
    value member(const type& t, std::uint64_t off) const {
        if (!bytes_.empty() && off + t.size() <= bytes_.size()) {
            value v;
            v.val_type = t;
            v.bytes.assign(bytes_.begin() + static_cast<std::ptrdiff_t>(off),
                           bytes_.begin() + static_cast<std::ptrdiff_t>(off + t.size()));
            if (base_ != 0) {
                v.address = base_ + off;
            }
            return v;
        }
        return lvalue_at(t, base_ + off);
    }

private:
    eval_context& ctx_;
    std::uint64_t base_;
    const std::vector<std::byte>& bytes_;
};

std::string count_text(std::uint64_t n) {
    return n == 1 ? "1 element" : std::to_string(n) + " elements";
}

/// "std::vector" of "std::vector<int, std::allocator<int> >".
std::string_view template_name(std::string_view tag) {
    return tag.substr(0, tag.find('<'));
}

/// Collects children up to the limit; `more` as gdb's print_children decides it: the limit
/// was reached (even when nothing follows, as gdb prints "..." then too).
class child_list {
public:
    child_list(pretty_value& out, std::size_t limit) : out_(out), limit_(limit) {}
    /// False once the limit is reached: stop walking.
    bool add(std::string name, value v) {
        if (out_.children.size() >= limit_) {
            out_.more_children = true;
            return false;
        }
        out_.children.push_back({std::move(name), std::move(v)});
        if (out_.children.size() >= limit_) {
            out_.more_children = true;
            return false;
        }
        return true;
    }

private:
    pretty_value& out_;
    std::size_t limit_;
};

std::optional<pretty_value> string_printer(const type& s, const layout_reader& r, eval_context& ctx,
                                           std::size_t limit) {
    auto chars = template_arg(s, 0);
    if (!chars || chars->strip_cv_typedef().name() != "char") {
        return std::nullopt;   // wstring, u16string: left to the raw form
    }
    auto p = find_field(s, "_M_p");
    if (!p) {
        // clang leaves _Alloc_hider incomplete (libstdc++ declares the string extern): its
        // pointer is its only data member, at its start.
        p = find_field(s, "_M_dataplus");
    }
    auto len = find_field(s, "_M_string_length");
    if (!p || !len) {
        return std::nullopt;
    }
    std::uint64_t addr = r.own_u64(p->offset);
    std::uint64_t n = r.own_u64(len->offset);
    pretty_value out;
    out.display = pretty_value::hint::string;
    std::uint64_t shown = std::min<std::uint64_t>(n, limit);
    std::vector<std::byte> buf(shown);
    if (shown != 0) {
        ctx.read_memory(addr, buf);
    }
    for (auto b : buf) {
        out.text.push_back(static_cast<unsigned char>(b));
    }
    out.more_children = n > limit;
    return out;
}

std::optional<pretty_value> vector_printer(std::string_view name, const type& s, const layout_reader& r,
                                           std::size_t limit) {
    auto start = find_field(s, "_M_start");
    auto finish = find_field(s, "_M_finish");
    auto end = find_field(s, "_M_end_of_storage");
    if (!start || !finish || !end || start->t.strip_cv_typedef().kind() != type_kind::pointer) {
        return std::nullopt;   // vector<bool> keeps bit iterators: raw form
    }
    type elem = start->t.strip_cv_typedef().target().value_or(type());
    std::uint64_t size = elem.size();
    std::uint64_t b = r.own_u64(start->offset), f = r.own_u64(finish->offset), e = r.own_u64(end->offset);
    if (size == 0 || f < b || e < f) {
        return std::nullopt;
    }
    pretty_value out;
    out.summary = std::string(name) + " of length " + std::to_string((f - b) / size) + ", capacity " +
                  std::to_string((e - b) / size);
    out.display = pretty_value::hint::array;
    child_list kids(out, limit);
    for (std::uint64_t i = 0; i < (f - b) / size; ++i) {
        if (!kids.add("[" + std::to_string(i) + "]", lvalue_at(elem, b + i * size))) {
            break;
        }
    }
    return out;
}

std::optional<pretty_value> list_printer(std::string_view name, const type& s, const layout_reader& r,
                                         std::size_t limit) {
    auto elem = template_arg(s, 0);
    auto node = find_field(s, "_M_node");
    if (!elem || elem->size() == 0 || !node) {
        return std::nullopt;
    }
    std::uint64_t head = r.own_u64(node->offset);   // _M_next of the sentinel
    std::uint64_t sentinel = 0;
    pretty_value out;
    child_list kids(out, limit);
    // The sentinel's own address: the object's address plus the member's offset.
    if (auto whole = r.member(node->t, node->offset); whole.address) {
        sentinel = *whole.address;
    } else {
        return std::nullopt;
    }
    out.summary = head == sentinel ? "empty " + std::string(name) : std::string(name);
    std::uint64_t n = 0;
    for (std::uint64_t at = head; at != sentinel && at != 0 && n < max_walk; at = r.mem(at), ++n) {
        if (!kids.add("[" + std::to_string(n) + "]", lvalue_at(*elem, at + list_node_value_offset))) {
            break;
        }
    }
    return out;
}

/// The elements of an associative container (map-like: key and value as two children).
class element_children {
public:
    /// nullopt when `elem` has no size or a map's pair lacks first/second.
    static std::optional<element_children> make(std::string_view name, bool is_map, std::uint64_t count,
                                                const std::optional<type>& elem, pretty_value& out,
                                                std::size_t limit) {
        if (!elem || elem->size() == 0) {
            return std::nullopt;
        }
        std::optional<field> first, second;
        if (is_map && (!(first = find_field(*elem, "first")) || !(second = find_field(*elem, "second")))) {
            return std::nullopt;
        }
        out.summary = std::string(name) + " with " + count_text(count);
        out.display = is_map ? pretty_value::hint::map : pretty_value::hint::none;
        return element_children(out, limit, *elem, first, second);
    }
    /// Element `i` stored at `at`; false once the limit is reached.
    bool add(std::uint64_t i, std::uint64_t at) {
        if (!first_) {
            return kids_.add("[" + std::to_string(i) + "]", lvalue_at(elem_, at));
        }
        return kids_.add("[" + std::to_string(2 * i) + "]", lvalue_at(first_->t, at + first_->offset)) &&
               kids_.add("[" + std::to_string(2 * i + 1) + "]", lvalue_at(second_->t, at + second_->offset));
    }

private:
    element_children(pretty_value& out, std::size_t limit, type elem, std::optional<field> first,
                     std::optional<field> second)
        : kids_(out, limit), elem_(std::move(elem)), first_(std::move(first)), second_(std::move(second)) {}
    child_list kids_;
    type elem_;
    std::optional<field> first_, second_;
};

/// In-order walk of libstdc++'s red-black tree (std::map, set, multimap, multiset).
std::optional<pretty_value> tree_printer(std::string_view name, bool is_map, const type& s,
                                         const layout_reader& r, std::size_t limit) {
    auto tree = find_field(s, "_M_t");
    auto header = find_field(s, "_M_header");
    auto count = find_field(s, "_M_node_count");
    if (!tree || !header || !count) {
        return std::nullopt;
    }
    std::uint64_t n = r.own_u64(count->offset);
    pretty_value out;
    auto kids = element_children::make(name, is_map, n, template_arg(tree->t, 1), out, limit);   // _Rb_tree<Key, Val>
    if (!kids) {
        return std::nullopt;
    }
    std::uint64_t node = r.own_u64(header->offset + rb_left);   // leftmost
    for (std::uint64_t i = 0; i < n && i < max_walk && node != 0; ++i) {
        if (!kids->add(i, node + rb_node_value_offset)) {
            break;
        }
        // The in-order successor, as _Rb_tree_increment finds it.
        if (std::uint64_t right = r.mem(node + rb_right); right != 0) {
            node = right;
            for (std::uint64_t left; (left = r.mem(node + rb_left)) != 0;) {
                node = left;
            }
        } else {
            std::uint64_t parent = r.mem(node + rb_parent);
            std::uint64_t guard = 0;
            while (parent != 0 && node == r.mem(parent + rb_right) && ++guard < max_walk) {
                node = parent;
                parent = r.mem(parent + rb_parent);
            }
            if (r.mem(node + rb_right) != parent) {
                node = parent;
            }
        }
    }
    return out;
}

/// std::unordered_map/set and their multi forms: the hashtable's singly linked node list.
std::optional<pretty_value> hash_printer(std::string_view name, bool is_map, const type& s,
                                         const layout_reader& r, std::size_t limit) {
    auto table = find_field(s, "_M_h");
    auto before = find_field(s, "_M_before_begin");
    auto count = find_field(s, "_M_element_count");
    if (!table || !before || !count) {
        return std::nullopt;
    }
    std::uint64_t n = r.own_u64(count->offset);
    pretty_value out;
    auto kids = element_children::make(name, is_map, n, template_arg(table->t, 1), out, limit);   // _Hashtable<K, V>
    if (!kids) {
        return std::nullopt;
    }
    std::uint64_t node = r.own_u64(before->offset);   // _M_before_begin._M_nxt
    for (std::uint64_t i = 0; i < n && i < max_walk && node != 0; ++i, node = r.mem(node)) {
        if (!kids->add(i, node + hash_node_value_offset)) {
            break;
        }
    }
    return out;
}

/// unique_ptr's pointer: the `_M_head_impl` of the tuple's `_Head_base<0, T*>` (nullopt when
/// the layout is not that, or the member is no pointer).
std::optional<field> unique_ptr_pointer(const type& s) {
    auto head = find_base(s, "std::_Head_base<0,");   // gcc
    if (!head) {
        head = find_base(s, "std::_Head_base<0UL,");   // clang
    }
    auto impl = head ? find_field(head->t, "_M_head_impl") : std::nullopt;
    if (!impl || impl->t.strip_cv_typedef().kind() != type_kind::pointer) {
        return std::nullopt;
    }
    return field{impl->t, head->offset + impl->offset};
}

std::optional<pretty_value> unique_ptr_printer(const type& s, const layout_reader& r) {
    auto pointee = template_arg(s, 0);
    auto ptr = unique_ptr_pointer(s);
    if (!pointee || !ptr) {
        return std::nullopt;
    }
    pretty_value out;
    out.summary = "std::unique_ptr<" + pointee->name() + ">";
    out.children.push_back({"get()", r.member(ptr->t, ptr->offset)});
    return out;
}

std::optional<pretty_value> shared_ptr_printer(std::string_view name, const type& s, const layout_reader& r) {
    auto pointee = template_arg(s, 0);
    auto ptr = find_field(s, "_M_ptr");
    auto pi = find_field(s, "_M_pi");
    if (!pointee || !ptr || !pi) {
        return std::nullopt;
    }
    std::string state = "empty";
    if (std::uint64_t counts = r.own_u64(pi->offset); counts != 0) {
        auto base = pi->t.strip_cv_typedef().target();
        auto use = base ? find_field(*base, "_M_use_count") : std::nullopt;
        auto weak = base ? find_field(*base, "_M_weak_count") : std::nullopt;
        if (!use || !weak) {
            return std::nullopt;
        }
        auto u = static_cast<std::int32_t>(r.mem(counts + use->offset, 4));
        auto w = static_cast<std::int32_t>(r.mem(counts + weak->offset, 4));
        state = u == 0 ? "expired, weak count " + std::to_string(w)
                       : "use count " + std::to_string(u) + ", weak count " + std::to_string(w - 1);
    }
    pretty_value out;
    out.summary = std::string(name) + "<" + pointee->name() + "> (" + state + ")";
    out.children.push_back({"get()", r.member(ptr->t, ptr->offset)});
    return out;
}

std::optional<pretty_value> optional_printer(const type& s, const layout_reader& r) {
    auto contained = template_arg(s, 0);
    auto engaged = find_field(s, "_M_engaged");
    auto stored = find_field(s, "_M_value");
    if (!contained || !engaged || !stored) {
        return std::nullopt;
    }
    pretty_value out;
    out.summary = "std::optional<" + contained->name() + ">";
    if ((r.own(engaged->offset, 1) & 0xff) == 0) {
        out.summary += " [no contained value]";
        return out;
    }
    out.children.push_back({"[contained value]", r.member(stored->t, stored->offset)});
    return out;
}

}  // namespace

std::optional<pretty_value> libstdcxx_pretty(const value& v, const type& stripped, eval_context& ctx,
                                             std::size_t max_children) {
    std::string tag = stripped.tag_name();
    if (!tag.starts_with("std::")) {
        return std::nullopt;
    }
    std::string_view name = template_name(tag);
    if (name.size() == tag.size()) {
        return std::nullopt;   // not a template instance
    }
    std::size_t limit = max_children == 0 ? SIZE_MAX : max_children;
    layout_reader r(v, ctx);
    if (name == "std::__cxx11::basic_string" || name == "std::basic_string") {
        return string_printer(stripped, r, ctx, limit);
    }
    if (name == "std::vector") {
        return vector_printer(name, stripped, r, limit);
    }
    if (name == "std::__cxx11::list" || name == "std::list") {
        return list_printer(name, stripped, r, limit);
    }
    if (name == "std::map" || name == "std::multimap" || name == "std::set" || name == "std::multiset") {
        return tree_printer(name, name.ends_with("map"), stripped, r, limit);
    }
    if (name == "std::unordered_map" || name == "std::unordered_multimap" || name == "std::unordered_set" ||
        name == "std::unordered_multiset") {
        return hash_printer(name, name.ends_with("map"), stripped, r, limit);
    }
    if (name == "std::unique_ptr") {
        return unique_ptr_printer(stripped, r);
    }
    if (name == "std::shared_ptr" || name == "std::weak_ptr") {
        return shared_ptr_printer(name, stripped, r);
    }
    if (name == "std::optional") {
        return optional_printer(stripped, r);
    }
    return std::nullopt;
}

std::optional<value> libstdcxx_subscript(const value& v, const type& stripped, std::int64_t index,
                                         eval_context& ctx) {
    if (template_name(stripped.tag_name()) != "std::vector") {
        return std::nullopt;
    }
    auto start = find_field(stripped, "_M_start");
    if (!start || start->t.strip_cv_typedef().kind() != type_kind::pointer) {
        return std::nullopt;
    }
    type elem = start->t.strip_cv_typedef().target().value_or(type());
    layout_reader r(v, ctx);
    std::uint64_t base = r.own_u64(start->offset);
    return lvalue_at(elem, base + static_cast<std::uint64_t>(index) * elem.size());
}

std::optional<value> libstdcxx_pointee(const value& v, const type& stripped, eval_context& ctx) {
    std::string tag = stripped.tag_name();
    std::string_view name = template_name(tag);
    std::optional<field> ptr;
    if (name == "std::unique_ptr") {
        ptr = unique_ptr_pointer(stripped);
    } else if (name == "std::shared_ptr" || name == "std::weak_ptr") {
        ptr = find_field(stripped, "_M_ptr");
    }
    if (!ptr || ptr->t.strip_cv_typedef().kind() != type_kind::pointer) {
        return std::nullopt;
    }
    layout_reader r(v, ctx);
    return lvalue_at(ptr->t.strip_cv_typedef().target().value_or(type()), r.own_u64(ptr->offset));
}

namespace {

// The element count of a container the printers know, read from its header alone.
std::optional<std::uint64_t> container_size(std::string_view name, const type& s, const layout_reader& r) {
    if (name == "std::__cxx11::basic_string" || name == "std::basic_string") {
        auto len = find_field(s, "_M_string_length");
        return len ? std::optional(r.own_u64(len->offset)) : std::nullopt;
    }
    if (name == "std::vector") {
        auto start = find_field(s, "_M_start");
        auto finish = find_field(s, "_M_finish");
        if (!start || !finish || start->t.strip_cv_typedef().kind() != type_kind::pointer) {
            return std::nullopt;
        }
        std::uint64_t size = start->t.strip_cv_typedef().target().value_or(type()).size();
        std::uint64_t b = r.own_u64(start->offset), f = r.own_u64(finish->offset);
        return size == 0 || f < b ? std::nullopt : std::optional((f - b) / size);
    }
    const char* count_field = nullptr;
    if (name == "std::map" || name == "std::multimap" || name == "std::set" || name == "std::multiset") {
        count_field = "_M_node_count";
    } else if (name == "std::unordered_map" || name == "std::unordered_multimap" || name == "std::unordered_set" ||
               name == "std::unordered_multiset") {
        count_field = "_M_element_count";
    }
    auto count = count_field ? find_field(s, count_field) : std::nullopt;
    return count ? std::optional(r.own_u64(count->offset)) : std::nullopt;
}

}  // namespace

std::optional<value> libstdcxx_method(const value& obj, const type& stripped, const std::string& name,
                                      const std::vector<value>& args, eval_context& ctx) {
    std::string tag = stripped.tag_name();
    std::string_view tname = template_name(tag);
    if (!tag.starts_with("std::") || tname.size() == tag.size()) {
        return std::nullopt;
    }
    layout_reader r(obj, ctx);
    bool is_string = tname == "std::__cxx11::basic_string" || tname == "std::basic_string";
    if (args.empty() && (name == "size" || name == "empty" || (is_string && name == "length"))) {
        auto n = container_size(tname, stripped, r);
        if (!n) {
            return std::nullopt;
        }
        return name == "empty" ? make_int(bool_type(), *n == 0 ? 1 : 0) : make_int(ulong_type(), *n);
    }
    if (is_string && args.empty() && (name == "c_str" || name == "data")) {
        auto p = find_field(stripped, "_M_p");
        if (!p) {
            return std::nullopt;
        }
        return make_int(type::pointer_to(type::const_of(char_type())), r.own_u64(p->offset));
    }
    if (name == "get" && args.empty()) {
        auto ptr = tname == "std::unique_ptr" ? unique_ptr_pointer(stripped)
                   : (tname == "std::shared_ptr" || tname == "std::weak_ptr") ? find_field(stripped, "_M_ptr")
                                                                               : std::nullopt;
        if (!ptr) {
            return std::nullopt;
        }
        return make_int(ptr->t, r.own_u64(ptr->offset));
    }
    if (tname != "std::vector") {
        return std::nullopt;
    }
    auto n = container_size(tname, stripped, r);
    if (!n) {
        return std::nullopt;
    }
    std::optional<std::int64_t> index;
    if (name == "front" && args.empty()) {
        index = 0;
    } else if (name == "back" && args.empty()) {
        index = static_cast<std::int64_t>(*n) - 1;
    } else if ((name == "at" || name == "operator[]") && args.size() == 1 && is_integral(args[0].val_type)) {
        index = to_int(args[0]);
        if (name == "at" && (*index < 0 || static_cast<std::uint64_t>(*index) >= *n)) {
            // gdb's xmethod raises IndexError with this text.
            error::send("Vector index \"" + std::to_string(*index) + "\" should not be >= " + std::to_string(*n) + ".");
        }
    }
    if (!index) {
        return std::nullopt;
    }
    return libstdcxx_subscript(obj, stripped, *index, ctx);
}

}  // namespace ompdbg::dwarf::detail
