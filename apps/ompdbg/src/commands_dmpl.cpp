// OpenMP through DMPL (issue 5): the commands. `omp threadprivate`, `set dmpl-library`,
// and the DMPL views wrapped around `bt`, `info locals`, `omp info`, `omp threads`,
// `omp parallel` and `omp bt`. The runtime and its library are in dmpl_runtime.cpp, the
// views in omp_folded_backtrace.cpp, outlined_locals.cpp, commands_omp_threadprivate.cpp and
// gomp_views.cpp (commands_dmpl_shared.hpp).

#include "commands_dmpl.hpp"
#include "commands_dmpl_shared.hpp"
#include "command_args.hpp"

#include <functional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "omp_stack_view.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

using namespace dmpl_impl;

namespace {

/// Replaces the handler of `name` in `table` by `wrap(old handler)`.
void wrap(command_table& table, std::string_view name,
          const std::function<command_handler(command_handler)>& wrapper) {
    command* c = table.find_mutable(name);
    if (c == nullptr || !c->handler) {
        return;
    }
    c->handler = wrapper(c->handler);
}

}  // namespace

void register_dmpl_commands(command_table& t) {
    command_table& omp = t.prefix("omp");
    omp.add(command{"threadprivate", {"tp"}, "Show every thread's copy of a threadprivate variable.",
                    "omp threadprivate NAME\nThe value and address of NAME in every thread: native TLS through\n"
                    "libthread_db, copies kept by the OpenMP runtime through its DMPL library.",
                    cmd_omp_threadprivate, false, nullptr});
    command_table& set = t.prefix("set");
    set.add(command{"dmpl-library", {}, "Use this DMPL library for the program's OpenMP runtime.",
                    "set dmpl-library PATH\nLoad PATH (under the plugin-path policy) instead of ompdbg's own\n"
                    "DMPL library for libomp or libgomp.",
                    [](session& s, std::string_view a) { dmpl_set_library(s, std::string(trim(a))); }, false,
                    nullptr});

    wrap(t, "backtrace", [](command_handler old) -> command_handler {
        return [old](session& s, std::string_view args) {
            // `set omp-bt-filter off` leaves every frame to gdb's plain backtrace.
            if (trim(args).empty() && omp_bt_filter(s) && folded_backtrace(s, false)) {
                return;
            }
            old(s, args);
        };
    });
    if (command* info = t.find_mutable("info"); info != nullptr && info->subcommands) {
        wrap(*info->subcommands, "locals", [](command_handler old) -> command_handler {
            return [old](session& s, std::string_view args) {
                if (!outlined_locals(s)) {
                    old(s, args);
                }
            };
        });
    }
    wrap(omp, "info", [](command_handler old) -> command_handler {
        return [old](session& s, std::string_view args) {
            std::string ompd_problem;
            try {
                old(s, args);
            } catch (const error& e) {
                if (runtime_of(s) == runtime_kind::none) {
                    throw;
                }
                ompd_problem = e.what();
            }
            dmpl_library_info lib = dmpl_library_of(s);
            s.out().line("DMPL library:        " + lib.path);
            s.out().line("DMPL version string: " + lib.version_string);
            s.out().line(fmt::format("DMPL interface:      {} ({})", lib.compatibility, lib.initialiser));
            if (lib.rtl_names) {
                s.out().line("DMPL runtime names:  " + lib.rtl_names->first + ", " + lib.rtl_names->second);
            }
            if (!ompd_problem.empty()) {
                s.out().line("OMPD:                not available: " + ompd_problem);
            }
            s.out().field("dmpl_library", lib.path);
            s.out().field("dmpl_version_string", lib.version_string);
        };
    });
    for (const char* name : {"threads", "parallel"}) {
        std::string which = name;
        wrap(omp, name, [which](command_handler old) -> command_handler {
            return [old, which](session& s, std::string_view args) {
                if (runtime_of(s) != runtime_kind::libgomp) {
                    old(s, args);
                    return;
                }
                auto fc = make_fold_context(s);
                if (!fc) {
                    require_dmpl(s);  // says why
                    return;
                }
                const tracer::loaded_module* rt = find_runtime(*s.target()).module;
                if (which == "threads") {
                    gomp_omp_threads(s, *fc, rt);
                } else {
                    gomp_omp_parallel(s, *fc, rt);
                }
            };
        });
    }
    wrap(omp, "bt", [](command_handler old) -> command_handler {
        return [old](session& s, std::string_view args) {
            try {
                old(s, args);
            } catch (const error&) {
                // No OMPD (libgomp, OMP_DEBUG unset): fold with the DMPL rtl names instead.
                if (!folded_backtrace(s, trim(args) == "continued")) {
                    throw;
                }
            }
        };
    });
}

}  // namespace ompdbg::app
