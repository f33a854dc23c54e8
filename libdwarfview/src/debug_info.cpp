#include "ompdbg/dwarf/debug_info.hpp"

#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/scope_members.hpp"

#include "internal/debug_info_impl.hpp"
#include "internal/die_util.hpp"
#include "internal/dwarf_index.hpp"
#include "internal/line_table.hpp"
#include "internal/name_filter.hpp"
#include "internal/unit_filter.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include <dwarf.h>

namespace ompdbg::dwarf {

using namespace internal;

namespace {

// Does any variable of the unit use a location list? gdb trusts the locations of such gcc
// units from the function's first instruction on (compunit_symtab::locations_valid) and
// then does not skip prologues.
bool unit_has_loclist(Dwarf_Die die, int depth) {
    if (depth > 64) {
        return false;
    }
    Dwarf_Die child;
    if (dwarf_child(&die, &child) != 0) {
        return false;
    }
    do {
        Dwarf_Attribute attr;
        if (dwarf_attr(&child, DW_AT_location, &attr) != nullptr) {
            unsigned form = dwarf_whatform(&attr);
            if (form == DW_FORM_sec_offset || form == DW_FORM_loclistx ||
                form == DW_FORM_data4 || form == DW_FORM_data8) {
                return true;
            }
        }
        if (dwarf_haschildren(&child) > 0 && unit_has_loclist(child, depth + 1)) {
            return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

}  // namespace

void debug_info::impl::load_cus() {
    std::call_once(cus_once, [&] {
        Dwarf_CU* cu = nullptr;
        Dwarf_CU* next = nullptr;
        Dwarf_Half version = 0;
        std::uint8_t unit_type = 0;
        Dwarf_Die cudie, subdie;
        while (dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
            cu = next;
            if (dwarf_tag(&cudie) != DW_TAG_compile_unit && dwarf_tag(&cudie) != DW_TAG_skeleton_unit) {
                continue;
            }
            auto e = std::make_unique<cu_entry>();
            e->die = unit_type == DW_UT_skeleton ? subdie : cudie;
            e->ranges = ranges_of(cudie);
            Dwarf_Attribute attr;
            const char* producer = dwarf_formstring(dwarf_attr(&cudie, DW_AT_producer, &attr));
            e->is_gnu = producer != nullptr && std::string_view(producer).starts_with("GNU");
            std::size_t idx = cus.size();
            for (auto& [lo, hi] : e->ranges) {
                cu_ranges.emplace_back(lo, hi, idx);
            }
            cu_by_die[die_key(e->die)] = idx;
            cu_by_die[die_key(cudie)] = idx;
            cus.push_back(std::move(e));
        }
        std::sort(cu_ranges.begin(), cu_ranges.end());
        log::write(log::channel::dwarf, "{}: {} compile units", owner.path().string(), cus.size());
    });
}

const dwarf_index& debug_info::impl::index() {
    std::call_once(index_once, [&] {
        index_ = std::make_unique<dwarf_index>(dwarf);
        log::write(log::channel::dwarf, "{}: indexed {} functions, {} globals, {} types",
                   owner.path().string(), index_->functions().size(), index_->globals().size(),
                   index_->types().size());
        index_ready = true;
    });
    return *index_;
}

namespace {

// OMPDBG_DWARF_INDEX=eager indexes a file on its first lookup, as before the name filter
// and the lazy names existed (the "before" of the benchmarks, and an escape hatch).
bool eager_index() {
    static const bool eager = [] {
        const char* v = std::getenv("OMPDBG_DWARF_INDEX");
        return v != nullptr && std::string_view(v) == "eager";
    }();
    return eager;
}

}  // namespace

bool debug_info::impl::may_name(std::string_view qualified) {
    if (eager_index()) {
        index();
    }
    if (index_ready) {
        return true;
    }
    std::call_once(filter_once, [&] {
        filter_ = std::make_unique<name_filter>(dwarf);
        // Split units keep their names in .dwo files the filter does not read.
        Dwarf_CU* cu = nullptr;
        Dwarf_CU* next = nullptr;
        Dwarf_Half version = 0;
        std::uint8_t unit_type = 0;
        while (dwarf_get_units(dwarf, cu, &next, &version, &unit_type, nullptr, nullptr) == 0) {
            cu = next;
            if (unit_type == DW_UT_skeleton) {
                filter_->disable();
                break;
            }
        }
    });
    std::string leaf = leaf_of(qualified);
    bool maybe = leaf.empty() || filter_->may_contain(leaf);
    if (!maybe) {
        log::write(log::channel::dwarf, "{}: no DIE can be named {}, not indexed", owner.path().string(), leaf);
    }
    return maybe;
}

const unit_filter& debug_info::impl::filter_of_units() {
    std::call_once(unit_filter_once, [&] {
        unit_filter_ = std::make_unique<unit_filter>(dwarf);
        if (!unit_filter_->usable()) {
            log::write(log::channel::dwarf, "{}: units refer to each other, lookups index the whole file",
                       owner.path().string());
        }
    });
    return *unit_filter_;
}

const unit_names* debug_info::impl::names_table() {
    if (eager_index() || index_ready) {
        return nullptr;   // the whole index answers: nothing to read or write
    }
    std::call_once(names_once, [&] {
        internal::cached_unit_names cached = internal::load_unit_names(dwarf);
        if (cached.table || !cached.key) {
            names_ = std::move(cached.table);
            return;
        }
        // A miss: read every unit's function names once (the walk a lookup of a short name
        // does anyway in a large library), for this session and the next ones.
        const unit_filter& filter = filter_of_units();
        if (filter.usable()) {
            names_ = unit_names::build(filter, *cached.key);
            if (names_) {
                internal::store_unit_names(*names_, *cached.key);
                log::write(log::channel::dwarf, "{}: {} spellings of function names in {} units, for the index cache",
                           owner.path().string(), names_->key_count(), names_->unit_count());
            }
        }
    });
    return names_ ? &*names_ : nullptr;
}

std::vector<const dwarf_index*> debug_info::impl::function_sources(const std::string& query) {
    if (eager_index() || index_ready) {
        return {&index()};
    }
    std::string leaf = leaf_of(query);
    if (leaf.empty()) {
        return {&index()};
    }
    const unit_names* names = names_table();
    if (names == nullptr && !filter_of_units().usable()) {
        return {&index()};
    }
    std::vector<Dwarf_Off> units;
    std::size_t unit_count = 0;
    if (names != nullptr) {
        units = names->candidates(leaf);
        unit_count = names->unit_count();
    } else {
        {
            // Every loaded library re-resolves a pending `break NAME`: scan once per name.
            std::lock_guard lock(unit_index_mutex);
            auto it = units_by_leaf.find(leaf);
            if (it == units_by_leaf.end()) {
                it = units_by_leaf.emplace(leaf, unit_filter_->candidates(leaf)).first;
            }
            units = it->second;
        }
        load_cus();
        unit_count = cus.size();
    }
    // A name most units of a large file may hold: the whole index is as cheap, and later
    // lookups need it.
    if (unit_count >= 16 && units.size() * 2 > unit_count) {
        log::write(log::channel::dwarf, "{}: {} of {} units may name {}: whole index", owner.path().string(),
                   units.size(), unit_count, leaf);
        return {&index()};
    }
    std::vector<const dwarf_index*> out;
    std::lock_guard lock(unit_index_mutex);
    std::size_t built = 0;
    for (Dwarf_Off off : units) {
        auto& idx = unit_indexes[off];
        if (!idx) {
            Dwarf_Die die;
            if (dwarf_offdie(dwarf, off, &die) == nullptr) {
                continue;
            }
            idx = std::make_unique<dwarf_index>(die);
            ++built;
        }
        out.push_back(idx.get());
    }
    log::write(log::channel::dwarf, "{}: {} of {} units may name {} ({} indexed now)", owner.path().string(),
               units.size(), unit_count, leaf, built);
    return out;
}

std::string debug_info::impl::qualified_name(Dwarf_Die die) {
    if (eager_index()) {
        index();
    }
    return index_ready ? index_->qualified_name(die) : qualified_name_without_index(die);
}

std::optional<std::size_t> debug_info::impl::cu_for(std::uint64_t addr) {
    load_cus();
    auto it = std::upper_bound(cu_ranges.begin(), cu_ranges.end(),
                               std::make_tuple(addr, ~0ull, ~std::size_t(0)));
    for (int tries = 0; it != cu_ranges.begin() && tries < 8; ++tries) {
        --it;
        if (addr >= std::get<0>(*it) && addr < std::get<1>(*it)) {
            return std::get<2>(*it);
        }
    }
    // Units without ranges (rare): ask the aranges.
    Dwarf_Die die;
    if (dwarf_addrdie(dwarf, addr, &die) != nullptr) {
        return cu_of_die(die);
    }
    return std::nullopt;
}

std::optional<std::size_t> debug_info::impl::cu_of_die(Dwarf_Die die) {
    load_cus();
    Dwarf_Die cudie;
    if (dwarf_diecu(&die, &cudie, nullptr, nullptr) == nullptr) {
        return std::nullopt;
    }
    if (auto it = cu_by_die.find(die_key(cudie)); it != cu_by_die.end()) {
        return it->second;
    }
    return std::nullopt;
}

const line_table& debug_info::impl::lines(std::size_t cu) {
    cu_entry& e = *cus[cu];
    std::call_once(e.lines_once, [&] { e.lines = std::make_unique<line_table>(e.die); });
    return *e.lines;
}

bool debug_info::impl::has_loclist(std::size_t cu) {
    cu_entry& e = *cus[cu];
    std::call_once(e.loclist_once, [&] { e.has_loclist = unit_has_loclist(e.die, 0); });
    return e.has_loclist;
}

// The DIEs from the unit down to the innermost scope holding addr, outermost first
// (namespaces are searched but not returned). A hand-written walk rather than
// dwarf_getscopes, which continues an inlined subroutine with its abstract origin's
// scopes instead of the caller's.
namespace {

/// The assembler (gas) describes each global label of a .S file as a childless subprogram,
/// aliases at the same address one after the other (__getpid, __GI___getpid, getpid,
/// __GI_getpid): gdb names the code by the last of them that holds `addr`, as ompdbg does.
Dwarf_Die last_alias(Dwarf_Die first, std::uint64_t addr) {
    Dwarf_Die best = first;
    Dwarf_Die next = first;
    while (dwarf_siblingof(&next, &next) == 0 && dwarf_tag(&next) == DW_TAG_subprogram && !dwarf_haschildren(&next)) {
        if (has_pc(next, addr)) {
            best = next;
        }
    }
    return best;
}

}  // namespace

std::vector<Dwarf_Die> debug_info::impl::scope_chain(Dwarf_Die cudie, std::uint64_t addr) {
    std::vector<Dwarf_Die> chain;
    auto find = [&](auto& self, Dwarf_Die parent, int depth) -> bool {
        if (depth > 64) {
            return false;
        }
        Dwarf_Die child;
        if (dwarf_child(&parent, &child) != 0) {
            return false;
        }
        do {
            switch (dwarf_tag(&child)) {
            case DW_TAG_subprogram: case DW_TAG_inlined_subroutine: case DW_TAG_lexical_block:
            case DW_TAG_try_block: case DW_TAG_catch_block: case DW_TAG_entry_point:
                if (has_pc(child, addr)) {
                    if (dwarf_tag(&child) == DW_TAG_subprogram && !dwarf_haschildren(&child)) {
                        child = last_alias(child, addr);
                    }
                    chain.push_back(child);
                    self(self, child, depth + 1);
                    return true;
                }
                // gcc nests the routines it outlines for OpenMP (main._omp_fn.0) inside the
                // function's DIE although their code lies elsewhere, and a nested region's
                // routine (main._omp_fn.1) inside the lexical block of the enclosing
                // region's body: look inside both.
                if ((dwarf_tag(&child) == DW_TAG_subprogram || dwarf_tag(&child) == DW_TAG_lexical_block) &&
                    dwarf_haschildren(&child) && self(self, child, depth + 1)) {
                    return true;
                }
                break;
            case DW_TAG_namespace: case DW_TAG_module: case DW_TAG_structure_type:
            case DW_TAG_class_type: case DW_TAG_union_type:
                if (self(self, child, depth + 1)) {
                    return true;
                }
                break;
            default:
                break;
            }
        } while (dwarf_siblingof(&child, &child) == 0);
        return false;
    };
    find(find, cudie, 0);
    return chain;
}

std::vector<std::string> debug_info::impl::parameter_types(Dwarf_Die die) {
    // The declaration carries the parameter types (a concrete definition may only refer
    // to it); skip `this`.
    Dwarf_Die decl = die;
    for (int i = 0; i < 4; ++i) {
        auto next = ref_attr(decl, DW_AT_abstract_origin, false);
        if (!next) next = ref_attr(decl, DW_AT_specification, false);
        if (!next) break;
        decl = *next;
    }
    std::vector<std::string> out;
    Dwarf_Die child;
    if (dwarf_child(&decl, &child) != 0) {
        return out;
    }
    do {
        if (dwarf_tag(&child) == DW_TAG_formal_parameter && flag_of(child, DW_AT_artificial)) {
            // `this` of a const member function points to a const class: gdb spells the
            // function "klass::f(int) const".
            auto t = ref_attr(child, DW_AT_type);
            if (t && dwarf_tag(&*t) == DW_TAG_pointer_type) {
                auto pointee = ref_attr(*t, DW_AT_type);
                if (pointee && dwarf_tag(&*pointee) == DW_TAG_const_type) {
                    out.push_back(")const");
                }
            }
        } else if (dwarf_tag(&child) == DW_TAG_formal_parameter) {
            auto t = ref_attr(child, DW_AT_type);
            out.push_back(t ? type(*t).name() : "void");
        } else if (dwarf_tag(&child) == DW_TAG_unspecified_parameters) {
            out.push_back("...");
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return out;
}

std::uint64_t debug_info::impl::breakpoint_pc(const function& fn) {
    if (fn.is_inlined) {
        // gdb ignores DW_AT_entry_pc: an inlined block starts at its first listed range.
        return fn.ranges.empty() ? fn.entry_pc : fn.ranges.front().first;
    }
    auto cu = cu_of_die(fn.die);
    if (!cu) {
        return fn.entry_pc;
    }
    std::uint64_t lo = fn.entry_pc, hi = fn.entry_pc + 1;
    for (auto& [l, h] : fn.ranges) {
        if (fn.entry_pc >= l && fn.entry_pc < h) {
            lo = l;
            hi = h;
        }
    }
    auto rows = lines(*cu).rows_in(lo, hi);
    // 1. The compiler said where the prologue ends (clang; gdb 13 honours it first).
    for (auto& r : rows) {
        if (r.prologue_end && r.addr >= fn.entry_pc) {
            return r.addr;
        }
    }
    auto next_row_after = [&](std::uint64_t pc) -> std::optional<std::uint64_t> {
        for (auto& r : rows) {
            if (r.addr > pc && r.line != 0) {
                return r.addr;
            }
        }
        return std::nullopt;
    };
    if (!cus[*cu]->is_gnu) {
        // 2. LLVM: gdb's skip_prologue_using_sal, the end of the function's first line.
        return next_row_after(fn.entry_pc).value_or(fn.entry_pc);
    }
    // 3. gcc units with location lists: gdb trusts locations from the entry on.
    if (has_loclist(*cu)) {
        return fn.entry_pc;
    }
    // 4. gcc: gdb's amd64_analyze_prologue (endbr64; push %rbp; mov %rsp,%rbp), then the
    //    start of the next line-table row when that left it in the middle of a row.
    auto setup_end = owner.frame_setup_end(fn.entry_pc);
    if (!setup_end) {
        return fn.entry_pc;   // frameless: gdb stays at the entry
    }
    std::uint64_t post = *setup_end;
    const line_row* at = nullptr;
    for (auto& r : rows) {
        if (r.addr <= post) {
            at = &r;
        }
    }
    if (at == nullptr || at->addr == post) {
        return post;
    }
    // The row's end: the next row at a higher address, passing non-statement rows of the
    // same line (gdb's find_pc_sect_line).
    for (auto& r : rows) {
        if (r.addr > at->addr && !(r.line == at->line && !r.is_stmt)) {
            return r.addr;
        }
    }
    return post;
}

function debug_info::impl::make_function(Dwarf_Die die, Dwarf_Die frame_base, const std::string& name) {
    function fn;
    fn.name = name;
    fn.linkage_name = linkage_name_of(die);
    fn.ranges = ranges_of(die);
    fn.entry_pc = entry_pc_of(die, fn.ranges).value_or(0);
    fn.is_inlined = dwarf_tag(&die) == DW_TAG_inlined_subroutine;
    fn.decl_file = decl_file_of(die);
    fn.decl_line = decl_line_of(die);
    if (fn.is_inlined) {
        if (auto f = udata_of(die, DW_AT_call_file, false)) {
            fn.call_file = cu_file_name(die, *f);
        }
        fn.call_line = static_cast<int>(udata_of(die, DW_AT_call_line, false).value_or(0));
    }
    fn.die = die;
    fn.frame_base_die = frame_base;
    fn.breakpoint_pc = breakpoint_pc(fn);
    return fn;
}

debug_info::debug_info(const elf_file& owner, Dwarf* dwarf)
    : impl_(std::make_unique<impl>(owner, dwarf)) {}
debug_info::~debug_info() = default;

Dwarf* debug_info::raw() const { return impl_->dwarf; }

std::vector<function> debug_info::find_functions(std::string_view name) const {
    internal::function_query parsed = internal::parse_function_query(name);
    const std::string& query = parsed.name;
    const std::optional<std::string>& params = parsed.params;
    auto strip_spaces = [](std::string s) {
        std::erase(s, ' ');
        return s;
    };
    // The table of the index cache answers exactly; without it, a cheap test of the string
    // sections comes before any unit is read.
    if (impl_->names_table() == nullptr && !impl_->may_name(query)) {
        return {};
    }
    std::vector<function> out;
    for (const dwarf_index* source : impl_->function_sources(query)) {
        const dwarf_index& idx = *source;
        for (std::size_t i : idx.functions_named(query)) {
            const auto& rec = idx.functions()[i];
            if (params) {
                auto types = impl_->parameter_types(rec.die);
                bool is_const = std::erase(types, ")const") > 0;
                std::string list = "(";
                for (std::size_t k = 0; k < types.size(); ++k) {
                    list += (k ? "," : "") + types[k];
                }
                list += is_const ? ")const" : ")";
                std::string want = strip_spaces(*params);
                if (strip_spaces(list) != want && !(types.empty() && want == "(void)")) {
                    continue;
                }
            }
            out.push_back(impl_->make_function(rec.die, rec.frame_base, rec.name));
        }
    }
    std::sort(out.begin(), out.end(), [](const function& a, const function& b) {
        return a.entry_pc < b.entry_pc;
    });
    return out;
}

std::vector<function> debug_info::function_chain_at(std::uint64_t addr) const {
    return impl_->memoized(impl_->chain_memo, addr, [&] { return impl_->chain_at_uncached(addr); });
}

std::vector<function> debug_info::impl::chain_at_uncached(std::uint64_t addr) {
    auto cu = cu_for(addr);
    if (!cu) {
        return {};
    }
    auto chain = scope_chain(cus[*cu]->die, addr);
    std::vector<function> out;
    // The frame base of inlined copies is that of the nearest enclosing subprogram.
    std::optional<Dwarf_Die> subprogram;
    std::vector<std::pair<Dwarf_Die, Dwarf_Die>> fns;
    for (auto& d : chain) {
        int tag = dwarf_tag(&d);
        if (tag == DW_TAG_subprogram) {
            subprogram = d;
        }
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            fns.emplace_back(d, subprogram.value_or(d));
        }
    }
    for (auto it = fns.rbegin(); it != fns.rend(); ++it) {
        out.push_back(make_function(it->first, it->second, qualified_name(it->first)));
    }
    return out;
}

std::vector<std::string> debug_info::source_files() const {
    impl_->load_cus();
    std::set<std::string> files;
    for (std::size_t c = 0; c < impl_->cus.size(); ++c) {
        Dwarf_Files* f = nullptr;
        std::size_t n = 0;
        if (dwarf_getsrcfiles(&impl_->cus[c]->die, &f, &n) != 0) {
            continue;
        }
        for (std::size_t i = 0; i < n; ++i) {
            const char* s = dwarf_filesrc(f, i, nullptr, nullptr);
            if (s != nullptr && *s != '\0' && std::string_view(s) != "<built-in>") {
                Dwarf_Attribute attr;
                const char* dir = dwarf_formstring(dwarf_attr(&impl_->cus[c]->die, DW_AT_comp_dir, &attr));
                bool relative = s[0] != '/' && dir != nullptr && dir[0] == '/';
                files.insert(relative ? std::string(dir) + "/" + s : std::string(s));
            }
        }
    }
    return {files.begin(), files.end()};
}

std::string debug_info::display_name(const std::string& path) const {
    std::call_once(impl_->display_once, [&] {
        impl_->load_cus();
        for (const auto& cu : impl_->cus) {
            Dwarf_Die die = cu->die;
            Dwarf_Attribute attr;
            const char* name = dwarf_formstring(dwarf_attr(&die, DW_AT_name, &attr));
            const char* dir = dwarf_formstring(dwarf_attr(&die, DW_AT_comp_dir, &attr));
            if (name == nullptr || dir == nullptr || *name == '/' || *dir != '/') {
                continue;
            }
            auto full = (std::filesystem::path(dir) / name).lexically_normal().string();
            impl_->display_names.emplace(std::move(full), name);
        }
    });
    if (impl_->display_names.empty() || path.empty()) {
        return path;
    }
    auto it = impl_->display_names.find(std::filesystem::path(path).lexically_normal().string());
    return it != impl_->display_names.end() ? it->second : path;
}

std::vector<std::string> debug_info::all_function_names() const {
    const auto& idx = impl_->index();
    std::set<std::string> names;
    for (auto& f : idx.functions()) {
        names.insert(f.name);
    }
    for (auto& g : idx.globals()) {
        names.insert(g.name);
    }
    return {names.begin(), names.end()};
}

}  // namespace ompdbg::dwarf
