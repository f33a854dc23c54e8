// decompose_value (value_tree.hpp): the same walk as the formatter's, keeping the parts.

#include "ompdbg/dwarf/value_tree.hpp"

#include "internal/std_printers.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::dwarf {

namespace {

class decomposer {
public:
    decomposer(eval_context& ctx, const format_options& opts, std::size_t max_leaves)
        : ctx_(ctx), opts_(opts), budget_(max_leaves) {
        opts_.top_level = false;
    }

    value_tree walk(const value& in, bool root) {
        value v = detail::deref_reference(in, ctx_);
        if (!v.optimized_out) {
            detail::fetch(v, ctx_);
        }
        type s = v.val_type.strip_cv_typedef();
        value_tree t;
        std::optional<detail::pretty_value> pv;
        bool is_struct = s.kind() == type_kind::structure || s.kind() == type_kind::class_;
        if (is_struct && !v.optimized_out) {
            pv = pretty(v, s);
        }
        bool aggregate = !v.optimized_out && (is_struct ? !pv || pv->display != detail::pretty_value::hint::string
                                                        : is_walked_array(s));
        if (root || !aggregate) {
            t.text = format_value(v, ctx_, root ? top_ : opts_);
        }
        if (v.optimized_out) {
            spend();
            return t;   // other: "<optimized out>"
        }
        if (aggregate && is_struct) {
            structure(v, s, pv, t);
        } else if (aggregate) {
            array(v, s, t);
        } else if (detail::is_floating(s)) {
            t.k = value_tree::kind::floating;
            t.number = detail::to_float(v);
        } else if (detail::is_integral(s)) {
            t.k = value_tree::kind::integer;
            t.number = detail::is_signed(s) ? static_cast<long double>(detail::to_int(v))
                                            : static_cast<long double>(detail::raw_bits(v));
        }
        if (!aggregate) {
            spend();
        }
        return t;
    }

private:
    /// Arrays of known bound are walked; char arrays are one leaf (a string, as gdb prints).
    static bool is_walked_array(const type& s) {
        if (s.kind() != type_kind::array) {
            return false;
        }
        auto elem = s.target();
        auto counts = s.array_counts();
        return elem && !elem->strip_cv_typedef().is_char() && !counts.empty() && counts.front() != 0;
    }

    std::optional<detail::pretty_value> pretty(const value& v, const type& s) {
        try {
            return detail::libstdcxx_pretty(v, s, ctx_, budget_ + 1);
        } catch (const ompdbg::error&) {
            return std::nullopt;   // unreadable innards: the raw structure, as format_value
        }
    }

    void spend() {
        if (budget_ > 0) {
            --budget_;
        }
    }

    bool exhausted(value_tree& t) {
        if (budget_ == 0) {
            t.truncated = true;
            return true;
        }
        return false;
    }

    void array(const value& v, const type& s, value_tree& t) {
        type elem = *s.target();
        auto counts = s.array_counts();
        std::uint64_t row_size = s.size() / counts.front();
        // "int [2][3]" (one DIE, two bounds): the outer array's elements are "int [3]".
        type row = elem;
        for (std::size_t d = counts.size(); d-- > 1;) {
            row = type::array_of(row, counts[d]);
        }
        t.k = value_tree::kind::aggregate;
        for (std::uint64_t i = 0; i < counts.front(); ++i) {
            if (exhausted(t)) {
                return;
            }
            t.parts.emplace_back("[" + std::to_string(i) + "]", walk(detail::component(v, row, i * row_size), false));
        }
    }

    void structure(const value& v, const type& s, const std::optional<detail::pretty_value>& pv, value_tree& t) {
        t.k = value_tree::kind::aggregate;
        if (pv) {
            for (const auto& child : pv->children) {
                if (exhausted(t)) {
                    return;
                }
                std::string name = child.name.starts_with("[") ? child.name : "." + child.name;
                t.parts.emplace_back(name, walk(child.val, false));
            }
            t.truncated = t.truncated || pv->more_children;   // the printer stopped at the budget
            return;
        }
        t.has_fields = true;
        for (const auto& m : s.members()) {
            if (m.is_static || m.is_artificial) {
                continue;
            }
            if (exhausted(t)) {
                return;
            }
            std::string name = m.is_base_class ? "<" + m.get_type().name() + ">" : "." + m.name;
            t.parts.emplace_back(name, walk(detail::member_value(v, m), false));
        }
    }

    eval_context& ctx_;
    format_options opts_;
    format_options top_;
    std::size_t budget_;

public:
    void set_top(const format_options& o) { top_ = o; }
};

}  // namespace

value_tree decompose_value(const value& v, eval_context& ctx, const format_options& opts, std::size_t max_leaves) {
    decomposer d(ctx, opts, max_leaves);
    d.set_top(opts);
    return d.walk(v, true);
}

}  // namespace ompdbg::dwarf
