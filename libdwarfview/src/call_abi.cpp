// The x86-64 System V classification of arguments and return values (psABI 3.2.3): the
// algorithm gdb's amd64_classify implements, for the C and C++ types DWARF describes.

#include "ompdbg/dwarf/call_abi.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace ompdbg::dwarf {

namespace {

using classes = std::array<abi_class, 2>;

// The psABI merge of two classes of one eightbyte: memory wins, then integer, then sse.
abi_class merge(abi_class a, abi_class b) {
    if (a == b || b == abi_class::none) {
        return a;
    }
    if (a == abi_class::none) {
        return b;
    }
    if (a == abi_class::memory || b == abi_class::memory) {
        return abi_class::memory;
    }
    if (a == abi_class::integer || b == abi_class::integer) {
        return abi_class::integer;
    }
    return abi_class::sse;
}

bool is_float_type(const type& st) {
    return st.kind() == type_kind::base && st.encoding() == base_encoding::floating;
}

// __int128 and unsigned __int128: two INTEGER eightbytes (psABI 3.2.3).
bool is_int128(const type& st) {
    return st.kind() == type_kind::base && !is_float_type(st) && st.size() == 16;
}

// long double: class X87, passed in memory, returned in st(0) (gdb's amd64_classify).
bool is_x87(const type& st) {
    return is_float_type(st) && st.size() > 8 && st.name().find("long double") != std::string::npos;
}

// Classifies the part of an aggregate at `offset`; false when it forces memory.
bool classify_at(const type& t, std::uint64_t offset, classes& out) {
    type st = t.strip_cv_typedef();
    std::uint64_t size = st.size();
    switch (st.kind()) {
    case type_kind::structure:
    case type_kind::class_:
    case type_kind::union_:
        for (const auto& m : st.members()) {
            if (m.is_static) {
                continue;
            }
            if (m.bit_size) {
                std::uint64_t word = (m.byte_offset + offset) / 8;
                if (word > 1) {
                    return false;
                }
                out[word] = merge(out[word], abi_class::integer);
                continue;
            }
            if (!classify_at(m.get_type(), offset + m.byte_offset, out)) {
                return false;
            }
        }
        return true;
    case type_kind::array: {
        auto elem = st.target();
        if (!elem) {
            return false;
        }
        std::uint64_t esize = elem->strip_cv_typedef().size();
        for (std::uint64_t at = 0; esize != 0 && at + esize <= size; at += esize) {
            if (!classify_at(*elem, offset + at, out)) {
                return false;
            }
        }
        return true;
    }
    default:
        break;
    }
    if (size == 0) {
        return true;
    }
    if (is_int128(st) && offset == 0) {
        out[0] = merge(out[0], abi_class::integer);
        out[1] = merge(out[1], abi_class::integer);
        return true;
    }
    // Unaligned fields, long double and __int128 halves: memory (x87 is not decoded here).
    if (size > 8 || offset % size != 0 || offset + size > 16) {
        return false;
    }
    std::uint64_t word = offset / 8;
    out[word] = merge(out[word], is_float_type(st) ? abi_class::sse : abi_class::integer);
    return true;
}

bool is_record(const type& st) {
    return st.kind() == type_kind::structure || st.kind() == type_kind::class_ || st.kind() == type_kind::union_;
}

bool flag(Dwarf_Die* die, unsigned attr) {
    Dwarf_Attribute a;
    bool on = false;
    return dwarf_attr_integrate(die, attr, &a) != nullptr && dwarf_formflag(&a, &on) == 0 && on;
}

// True when member function `fn` of class `klass` is a copy constructor: its one parameter
// after `this` a reference to the class.
bool is_copy_constructor(Dwarf_Die* fn, const type& klass) {
    Dwarf_Die child;
    if (dwarf_child(fn, &child) != 0) {
        return false;
    }
    int params = 0;
    bool copies = false;
    do {
        if (dwarf_tag(&child) != DW_TAG_formal_parameter) {
            continue;
        }
        ++params;
        if (params == 2) {
            Dwarf_Attribute a;
            Dwarf_Die t;
            if (dwarf_attr_integrate(&child, DW_AT_type, &a) != nullptr && dwarf_formref_die(&a, &t) != nullptr) {
                type pt = type(t).strip_cv_typedef();
                copies = (pt.kind() == type_kind::reference || pt.kind() == type_kind::rvalue_reference) &&
                         pt.target() && pt.target()->strip_cv_typedef().tag_name() == klass.tag_name();
            }
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return params == 2 && copies;
}

// gdb's gnuv3_pass_by_reference: a user-provided (not compiler-made) copy constructor or
// destructor, or a base or member that has one.
bool needs_reference(const type& st, int depth) {
    if (!is_record(st) || depth > 16) {
        return false;
    }
    if (const Dwarf_Die* d = st.die()) {
        Dwarf_Die die = *d;
        Dwarf_Word cc = 0;
        Dwarf_Attribute a;
        // clang says it outright (DW_AT_calling_convention on the class).
        if (dwarf_attr_integrate(&die, DW_AT_calling_convention, &a) != nullptr && dwarf_formudata(&a, &cc) == 0) {
            if (cc == DW_CC_pass_by_reference) {
                return true;
            }
            if (cc == DW_CC_pass_by_value) {
                return false;
            }
        }
        Dwarf_Die child;
        if (dwarf_child(&die, &child) == 0) {
            do {
                if (dwarf_tag(&child) != DW_TAG_subprogram || flag(&child, DW_AT_artificial)) {
                    continue;
                }
                const char* name = dwarf_diename(&child);
                if (name == nullptr || flag(&child, DW_AT_defaulted)) {
                    continue;
                }
                if (name[0] == '~' || (st.tag_name().ends_with(name) && is_copy_constructor(&child, st))) {
                    return true;
                }
            } while (dwarf_siblingof(&child, &child) == 0);
        }
    }
    for (const auto& m : st.members()) {
        if (!m.is_static && needs_reference(m.get_type().strip_cv_typedef(), depth + 1)) {
            return true;
        }
    }
    return false;
}

void append_word(std::vector<std::byte>& stack, std::span<const std::byte> bytes) {
    std::size_t at = stack.size();
    stack.resize(at + (bytes.size() + 7) / 8 * 8);
    std::memcpy(stack.data() + at, bytes.data(), bytes.size());
}

}  // namespace

bool is_passed_by_reference(const type& t) { return needs_reference(t.strip_cv_typedef(), 0); }

std::array<abi_class, 2> classify_eightbytes(const type& t) {
    type st = t.strip_cv_typedef();
    std::uint64_t size = st.size();
    classes memory{abi_class::memory, abi_class::memory};
    if (st.kind() == type_kind::reference || st.kind() == type_kind::rvalue_reference) {
        return {abi_class::integer, abi_class::none};
    }
    if (size > 16 || (is_float_type(st) && size > 8) || is_passed_by_reference(st)) {
        return memory;
    }
    classes out{abi_class::none, abi_class::none};
    if (!classify_at(st, 0, out)) {
        return memory;
    }
    if (out[0] == abi_class::memory || out[1] == abi_class::memory) {
        return memory;
    }
    // A padding-only first eightbyte of a small aggregate still travels in a register.
    if (out[0] == abi_class::none && size > 0) {
        out[0] = abi_class::sse;
    }
    if (size > 8 && out[1] == abi_class::none) {
        out[1] = abi_class::sse;
    }
    return out;
}

bool returned_in_memory(const type& t) {
    if (t.is_void() || is_x87(t.strip_cv_typedef())) {
        return false;   // long double comes back in st(0)
    }
    return classify_eightbytes(t)[0] == abi_class::memory;
}

call_layout lay_out_call(std::span<const value> args, std::optional<std::uint64_t> sret) {
    call_layout out;
    if (sret) {
        out.int_regs.push_back(*sret);
    }
    for (const value& v : args) {
        auto cls = classify_eightbytes(v.val_type);
        std::span<const std::byte> bytes(v.bytes);
        int need_int = 0;
        int need_sse = 0;
        for (abi_class c : cls) {
            need_int += c == abi_class::integer ? 1 : 0;
            need_sse += c == abi_class::sse ? 1 : 0;
        }
        bool fits = cls[0] != abi_class::memory && out.int_regs.size() + need_int <= 6 &&
                    out.sse_regs.size() + need_sse <= 8;
        if (!fits) {
            // The whole argument goes on the stack, eightbyte-aligned; long double and
            // __int128 sixteen-byte aligned.
            type st = v.val_type.strip_cv_typedef();
            if ((is_float_type(st) || is_int128(st)) && st.size() == 16 && out.stack.size() % 16 != 0) {
                out.stack.resize(out.stack.size() + 8);
            }
            append_word(out.stack, bytes);
            continue;
        }
        for (std::size_t w = 0; w < 2; ++w) {
            if (cls[w] == abi_class::none || w * 8 >= bytes.size()) {
                continue;
            }
            std::array<std::byte, 16> word{};
            std::size_t n = std::min<std::size_t>(8, bytes.size() - w * 8);
            std::memcpy(word.data(), bytes.data() + w * 8, n);
            if (cls[w] == abi_class::integer) {
                std::uint64_t r = 0;
                std::memcpy(&r, word.data(), 8);
                out.int_regs.push_back(r);
            } else {
                out.sse_regs.push_back(word);
            }
        }
    }
    return out;
}

std::optional<std::vector<std::byte>> returned_bytes(const type& t, const return_registers& r) {
    auto cls = classify_eightbytes(t);
    if (cls[0] == abi_class::memory) {
        return std::nullopt;
    }
    std::uint64_t ints[2] = {r.rax, r.rdx};
    const std::array<std::byte, 16>* sses[2] = {&r.xmm0, &r.xmm1};
    std::byte words[16] = {};
    int next_int = 0;
    int next_sse = 0;
    for (int w = 0; w < 2; ++w) {
        if (cls[w] == abi_class::sse) {
            std::memcpy(words + w * 8, sses[next_sse++]->data(), 8);
        } else if (cls[w] == abi_class::integer) {
            std::memcpy(words + w * 8, &ints[next_int++], 8);
        }
    }
    std::vector<std::byte> bytes(std::min<std::uint64_t>(t.strip_cv_typedef().size(), 16));
    std::memcpy(bytes.data(), words, bytes.size());
    return bytes;
}

}  // namespace ompdbg::dwarf
