// value_children (value_children.hpp): one level of a value, for variables views (DAP).

#include "ompdbg/dwarf/value_children.hpp"

#include "internal/std_printers.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::dwarf {

namespace {

bool is_record(const type& t) {
    auto k = t.kind();
    return k == type_kind::structure || k == type_kind::class_ || k == type_kind::union_;
}

class lister {
public:
    lister(eval_context& ctx, std::size_t max) : ctx_(ctx), max_(max) {}

    std::vector<value_child> list(const value& in) {
        value v = detail::deref_reference(in, ctx_);
        if (v.optimized_out) {
            return {};
        }
        type s = v.val_type.strip_cv_typedef();
        if (is_record(s)) {
            detail::fetch(v, ctx_);
            if (s.kind() != type_kind::union_ && container(v, s)) {
                return std::move(out_);
            }
            fields(v, s);
        } else if (s.kind() == type_kind::array) {
            detail::fetch(v, ctx_);
            elements(v, s);
        } else if (s.kind() == type_kind::pointer) {
            pointee(v, s);
        }
        return std::move(out_);
    }

private:
    bool full() const { return out_.size() >= max_; }

    void add(std::string name, std::string prefix, std::string suffix, bool reachable, value val) {
        out_.push_back(value_child{std::move(name), std::move(prefix), std::move(suffix), reachable, std::move(val)});
    }

    // A libstdc++ container or smart pointer: its printer's children (a std::string has
    // none: it is its text). False for other records.
    bool container(const value& v, const type& s) {
        std::optional<detail::pretty_value> pv;
        try {
            pv = detail::libstdcxx_pretty(v, s, ctx_, 2 * max_);   // a map's entries are key, value pairs
        } catch (const ompdbg::error&) {
            return false;   // unreadable innards: the raw fields, as `print` does
        }
        if (!pv) {
            return false;
        }
        using hint = detail::pretty_value::hint;
        if (pv->display == hint::map) {
            for (std::size_t i = 0; i + 1 < pv->children.size() && !full(); i += 2) {
                std::string key = format_value(pv->children[i].val, ctx_);
                add("[" + key + "]", "", "", false, pv->children[i + 1].val);
            }
        } else if (pv->display != hint::string) {
            // A std::vector's `v[i]` is evaluated without running code (the xmethod).
            bool indexable = s.tag_name().rfind("std::vector<", 0) == 0 || s.name().rfind("std::vector<", 0) == 0;
            for (const auto& c : pv->children) {
                if (full()) {
                    break;
                }
                bool element = indexable && c.name.starts_with("[");
                add(c.name, "", element ? c.name : "", element, c.val);
            }
        }
        return true;
    }

    // Fields in declaration order; an anonymous struct or union's fields in its place
    // (they are named as the parent's own: `s.x` for `struct { union { int x; }; } s`).
    void fields(const value& v, const type& s) {
        for (const auto& m : s.members()) {
            if (full()) {
                return;
            }
            if (m.is_static) {
                continue;
            }
            value mv = detail::member_value(v, m);
            if (m.is_base_class) {
                add("<" + m.get_type().name() + ">", "", "", false, std::move(mv));
            } else if (m.name.empty()) {
                type anon = m.get_type().strip_cv_typedef();
                if (is_record(anon)) {
                    fields(mv, anon);
                }
            } else {
                add(m.name, "", "." + m.name, true, std::move(mv));
            }
        }
    }

    void elements(const value& v, const type& s) {
        auto counts = s.array_counts();
        auto elem = s.target();
        if (counts.empty() || counts.front() == 0 || !elem) {
            return;
        }
        // "int [2][3]" (one DIE, two bounds): the outer array's elements are "int [3]".
        type row = *elem;
        for (std::size_t d = counts.size(); d-- > 1;) {
            row = type::array_of(row, counts[d]);
        }
        std::uint64_t row_size = s.size() / counts.front();
        for (std::uint64_t i = 0; i < counts.front() && !full(); ++i) {
            std::string index = "[" + std::to_string(i) + "]";
            add(index, "", index, true, detail::component(v, row, i * row_size));
        }
    }

    // A pointer to a record opens to the record (null: nothing).
    void pointee(const value& v, const type& s) {
        auto target = s.target();
        if (!target || !is_record(target->strip_cv_typedef())) {
            return;
        }
        value p = v;
        detail::fetch(p, ctx_);
        std::uint64_t addr = detail::raw_bits(p);
        if (addr == 0) {
            return;
        }
        add("*", "*", "", true, detail::lvalue_at(*target, addr));
    }

    eval_context& ctx_;
    std::size_t max_;
    std::vector<value_child> out_;
};

}  // namespace

std::vector<value_child> value_children(const value& v, eval_context& ctx, std::size_t max) {
    return lister(ctx, max).list(v);
}

}  // namespace ompdbg::dwarf
