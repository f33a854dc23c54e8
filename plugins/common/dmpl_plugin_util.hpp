#pragma once
// Helpers both of ompdbg's DMPL plugins use: handing a demangled name back through the
// caller's buffer (DMPL_name_too_long with the needed length), C++ symbol demangling, and
// splitting "ROUTINE::VARIABLE" (dmpl.h, hint convention). Header-only: each plugin is one
// self-contained shared library.

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "ompdbg/plugins/dmpl.h"

namespace ompdbg::dmpl_plugin {

/// Copies `name` into (buf, buf_len) NUL-terminated and stores its length in *res_len;
/// DMPL_name_too_long (nothing copied) when it does not fit.
inline int give_name(std::string_view name, int* res_len, char* buf, int buf_len) {
    *res_len = static_cast<int>(name.size());
    if (buf == nullptr || buf_len <= 0 || name.size() + 1 > static_cast<std::size_t>(buf_len)) {
        return DMPL_name_too_long;
    }
    std::memcpy(buf, name.data(), name.size());
    buf[name.size()] = '\0';
    return DMPL_ok;
}

/// The source-level name of a routine symbol: Itanium C++ names demangled ("ns::K::work()"),
/// C names as they are.
inline std::string source_function_name(std::string_view symbol) {
    if (symbol.starts_with("_Z")) {
        std::string s(symbol);
        int status = 0;
        char* d = abi::__cxa_demangle(s.c_str(), nullptr, nullptr, &status);
        if (status == 0 && d != nullptr) {
            std::string out(d);
            std::free(d);
            return out;
        }
        std::free(d);
    }
    return std::string(symbol);
}

/// "ROUTINE::VARIABLE" split at the last "::" that is not inside a C++ signature; nullopt
/// for a plain name.
struct qualified_variable {
    std::string_view routine;
    std::string_view variable;
};
inline std::optional<qualified_variable> split_variable(std::string_view mangled) {
    // Variables have C identifiers (or compiler names starting with '.'); the routine part
    // may itself contain "::" only when demangled, which the host never passes.
    auto pos = mangled.rfind("::");
    if (pos == std::string_view::npos || pos == 0 || pos + 2 >= mangled.size()) {
        return std::nullopt;
    }
    return qualified_variable{mangled.substr(0, pos), mangled.substr(pos + 2)};
}

/// The entry-point checks every DMPL_demangle_name does first.
inline bool bad_demangle_args(const char* mangled, int* res_len, int* flags, int* decl_line) {
    return mangled == nullptr || res_len == nullptr || flags == nullptr || decl_line == nullptr;
}

}  // namespace ompdbg::dmpl_plugin
