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

#define DMPL_EXPORT extern "C" __attribute__((visibility("default")))

namespace ompdbg::dmpl_plugin {

/// The callback table the debugger gave DMPL_initialise (dmpl_plugin_entry.cpp, shared by
/// both plugins): the only global of a plugin, as in the paper's Fig. 10.
extern const DMPL_callbacks_t* cb;

/// The code for a null or malformed argument; each plugin defines it (its own codes
/// start at DMPL_first_user_code).
extern const int rc_bad_argument;

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

/// The text of the result codes dmpl.h defines (both plugins' DMPL_error_string start here);
/// nullptr for any other code.
inline const char* standard_error_string(int rc) {
    switch (rc) {
        case DMPL_ok: return "no error";
        case DMPL_tls_unallocated: return "this thread has not allocated its copy of the threadprivate object yet";
        case DMPL_name_too_long: return "buffer too small for the demangled name";
        case DMPL_name_unchanged: return "not a name the compiler made up";
        case DMPL_tls_native: return "native TLS: resolve it from the debug information";
        case DMPL_name_internal: return "a name the compiler or runtime made up for itself";
        default: return nullptr;
    }
}

/// True for the language codes of dmpl.h (DMPL_get_rtl_names answers for each).
inline bool known_language(int language) {
    return language == DMPL_lang_unknown || language == DMPL_lang_c || language == DMPL_lang_cplusplus ||
           language == DMPL_lang_f77 || language == DMPL_lang_f9x;
}

/// The entry-point checks every DMPL_demangle_name does first.
inline bool bad_demangle_args(const char* mangled, int* res_len, int* flags, int* decl_line) {
    return mangled == nullptr || res_len == nullptr || flags == nullptr || decl_line == nullptr;
}

/// Runs `demangle` (a plugin's DMPL_demangle_name body, which copies names into strings)
/// so that no C++ exception crosses the C interface into the debugger: ompdbg links its
/// own C++ runtime, not the libstdc++.so this plugin uses, and a C caller has no unwind
/// information at all. A name that cannot be worked out (std::bad_alloc) stays unchanged.
template <class Demangle>
int demangle_guarded(Demangle demangle, const char* mangled, int* res_len, char* demangled, int buf_len,
                     int* flags, int* decl_line) noexcept {
    if (bad_demangle_args(mangled, res_len, flags, decl_line)) {
        return rc_bad_argument;
    }
    try {
        return demangle(mangled, res_len, demangled, buf_len, flags, decl_line);
    } catch (...) {
        *flags = DMPL_varinfo_none;
        *decl_line = 0;
        *res_len = static_cast<int>(std::strlen(mangled));
        return DMPL_name_unchanged;
    }
}

}  // namespace ompdbg::dmpl_plugin
