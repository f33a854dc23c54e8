// The grouping of `omp compare` / `mpi compare` (value_compare.hpp).

#include "ompdbg/debugger/compare/value_compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace ompdbg::debugger::compare {

using dwarf::value_tree;

bool tolerance::close(long double a, long double b) const {
    if (a == b) {
        return true;
    }
    long double d = std::fabs(a - b);
    if (std::isnan(d)) {
        return false;
    }
    return d <= absolute || d <= relative * std::max(std::fabs(a), std::fabs(b));
}

bool same_value(const value_tree& a, const value_tree& b, const tolerance& tol) {
    if (a.k != b.k) {
        return false;
    }
    switch (a.k) {
        case value_tree::kind::integer:
            return a.number == b.number;
        case value_tree::kind::floating:
            // NaN equals NaN here: both print "nan(0x8000000000000)" and agree.
            return tol.close(a.number, b.number) || a.text == b.text;
        case value_tree::kind::other:
            return a.text == b.text;
        case value_tree::kind::aggregate:
            break;
    }
    if (a.parts.size() != b.parts.size() || a.truncated != b.truncated) {
        return false;
    }
    for (std::size_t i = 0; i < a.parts.size(); ++i) {
        if (a.parts[i].first != b.parts[i].first || !same_value(a.parts[i].second, b.parts[i].second, tol)) {
            return false;
        }
    }
    return true;
}

namespace {

std::size_t leaves(const value_tree& t) {
    if (t.k != value_tree::kind::aggregate) {
        return 1;
    }
    std::size_t n = 0;
    for (const auto& [name, part] : t.parts) {
        n += leaves(part);
    }
    return n;
}

/// Adds the differing leaves of `v` against `m` under `path` to `d`.
void diff_into(const value_tree& v, const value_tree& m, const std::string& path, const tolerance& tol,
               difference& d) {
    auto note = [&](const std::string& where, std::size_t n) {
        if (n != 0 && d.differing == 0) {
            d.first = where;
        }
        d.differing += n;
    };
    if (v.k != value_tree::kind::aggregate || m.k != value_tree::kind::aggregate) {
        if (!same_value(v, m, tol)) {
            note(path, std::max(leaves(v), leaves(m)));
        }
        return;
    }
    std::size_t common = std::min(v.parts.size(), m.parts.size());
    for (std::size_t i = 0; i < common; ++i) {
        if (v.parts[i].first != m.parts[i].first) {
            note(path + v.parts[i].first, std::max(leaves(v.parts[i].second), leaves(m.parts[i].second)));
            continue;
        }
        diff_into(v.parts[i].second, m.parts[i].second, path + v.parts[i].first, tol, d);
    }
    // Extra or missing elements of a longer or shorter container all differ.
    const auto& longer = v.parts.size() > m.parts.size() ? v : m;
    for (std::size_t i = common; i < longer.parts.size(); ++i) {
        note(path + longer.parts[i].first, leaves(longer.parts[i].second));
    }
}

}  // namespace

difference diff(const value_tree& v, const value_tree& majority, const tolerance& tol) {
    difference d;
    d.total = leaves(majority);
    d.fields = majority.has_fields;
    if (!majority.has_fields && v.k == value_tree::kind::aggregate && majority.k == value_tree::kind::aggregate &&
        v.parts.size() != majority.parts.size()) {
        d.lengths = std::make_pair(v.parts.size(), majority.parts.size());
    }
    diff_into(v, majority, "", tol, d);
    return d;
}

std::string error_reason(const std::string& message) {
    if (message.starts_with("No symbol ")) {
        return "not in scope";
    }
    if (message.find("optimized out") != std::string::npos) {
        return "optimized out";
    }
    if (message.starts_with("Cannot access memory")) {
        return "cannot access memory";
    }
    if (message == "No frame selected." || message == "No stack." || message.starts_with("No frame")) {
        return "no frame";
    }
    std::string r = message;
    if (!r.empty() && r.back() == '.') {
        r.pop_back();
    }
    return r;
}

namespace {

/// Numbers first, in ascending order, so that a tolerance grows groups from the smallest
/// number up; everything else keeps the members' order.
std::vector<const sample*> grouping_order(const std::vector<sample>& samples) {
    std::vector<const sample*> order;
    for (const auto& s : samples) {
        if (s.value) {
            order.push_back(&s);
        }
    }
    std::stable_sort(order.begin(), order.end(), [](const sample* a, const sample* b) {
        bool na = a->value->k == value_tree::kind::floating, nb = b->value->k == value_tree::kind::floating;
        if (na && nb) {
            return a->value->number < b->value->number;
        }
        return na && !nb;
    });
    return order;
}

void sort_groups(std::vector<value_group>& groups) {
    for (auto& g : groups) {
        std::sort(g.members.begin(), g.members.end());
    }
    std::stable_sort(groups.begin(), groups.end(), [](const value_group& a, const value_group& b) {
        if (a.members.size() != b.members.size()) {
            return a.members.size() > b.members.size();
        }
        return a.members.front() < b.members.front();
    });
}

std::optional<summary> summarize(const std::vector<sample>& samples) {
    summary s;
    long double sum = 0;
    for (const auto& x : samples) {
        if (!x.value) {
            continue;
        }
        if (!x.value->is_number()) {
            return std::nullopt;
        }
        long double n = x.value->number;
        if (s.count == 0 || n < s.min) {
            s.min = n;
            s.min_text = x.value->text;
        }
        if (s.count == 0 || n > s.max) {
            s.max = n;
            s.max_text = x.value->text;
        }
        sum += n;
        ++s.count;
    }
    if (s.count == 0) {
        return std::nullopt;
    }
    s.mean = sum / static_cast<long double>(s.count);
    for (const auto& x : samples) {
        if (x.value && x.value->number == s.min) {
            s.min_members.push_back(x.member);
        }
        if (x.value && x.value->number == s.max) {
            s.max_members.push_back(x.member);
        }
    }
    std::sort(s.min_members.begin(), s.min_members.end());
    std::sort(s.max_members.begin(), s.max_members.end());
    return s;
}

}  // namespace

result compare_samples(const std::vector<sample>& samples, const tolerance& tol) {
    result r;
    // The group's lowest and highest number, for groups a tolerance merged.
    std::vector<std::pair<const value_tree*, const value_tree*>> spans;
    for (const sample* s : grouping_order(samples)) {
        bool placed = false;
        for (std::size_t g = 0; g < r.groups.size() && !placed; ++g) {
            if (same_value(r.groups[g].value, *s->value, tol)) {
                r.groups[g].members.push_back(s->member);
                auto& [lo, hi] = spans[g];
                if (s->value->is_number() && s->value->number < lo->number) {
                    lo = &*s->value;
                }
                if (s->value->is_number() && s->value->number > hi->number) {
                    hi = &*s->value;
                }
                placed = true;
            }
        }
        if (!placed) {
            r.groups.push_back(value_group{{s->member}, *s->value, {}, {}, std::nullopt});
            spans.emplace_back(&*s->value, &*s->value);
        }
    }
    for (std::size_t g = 0; g < r.groups.size(); ++g) {
        auto [lo, hi] = spans[g];
        if (lo->is_number() && lo->number != hi->number) {
            r.groups[g].low_text = lo->text;
            r.groups[g].high_text = hi->text;
        }
    }
    sort_groups(r.groups);
    for (std::size_t g = 1; g < r.groups.size(); ++g) {
        if (r.groups[0].value.k == value_tree::kind::aggregate || r.groups[g].value.k == value_tree::kind::aggregate) {
            r.groups[g].differs = diff(r.groups[g].value, r.groups[0].value, tol);
        }
    }
    std::map<std::string, std::size_t> by_reason;
    for (const auto& s : samples) {
        if (s.value) {
            continue;
        }
        std::string reason = error_reason(s.message);
        auto [it, fresh] = by_reason.emplace(reason, r.errors.size());
        if (fresh) {
            r.errors.push_back(error_group{reason, s.message, {}});
        }
        r.errors[it->second].members.push_back(s.member);
    }
    for (auto& e : r.errors) {
        std::sort(e.members.begin(), e.members.end());
    }
    std::stable_sort(r.errors.begin(), r.errors.end(), [](const error_group& a, const error_group& b) {
        return a.members.size() > b.members.size();
    });
    r.stats = summarize(samples);
    return r;
}

}  // namespace ompdbg::debugger::compare
