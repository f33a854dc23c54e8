// Each thread's copy of a threadprivate variable: `omp threadprivate NAME`, and the copy
// that `print` shows in the selected thread (native TLS through libthread_db, copies the
// OpenMP runtime keeps through its DMPL library).

#include "commands_dmpl.hpp"
#include "commands_dmpl_shared.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command_args.hpp"
#include "ompdbg/debugger/omp/outlined_locals.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace dmpl_impl {

void cmd_omp_threadprivate(session& s, std::string_view args) {
    std::string name(trim(args));
    if (name.empty()) {
        error::send("Argument required (name of a threadprivate variable).");
    }
    std::vector<threadprivate_copy> rows = threadprivate_copies(s, name);
    s.out().line(fmt::format("  {:<4} {:<8} {:<4} {:<18} {}", "Id", "LWP", "OMP", "Address", "Value"));
    nlohmann::json js = nlohmann::json::array();
    for (const auto& r : rows) {
        std::string mark = r.tid == s.selected_tid() ? "*" : " ";
        s.out().line(fmt::format("{} {:<4} {:<8} {:<4} {:<18} {}", mark, s.thread_number(r.tid), r.tid, r.omp_thread,
                                 r.address, r.value));
        js.push_back({{"id", s.thread_number(r.tid)}, {"lwp", r.tid}, {"omp_thread", r.omp_thread},
                      {"address", r.address}, {"value", r.value}});
    }
    s.out().field("variable", name);
    s.out().field("threads", js);
}

}  // namespace dmpl_impl

using namespace dmpl_impl;

}  // namespace ompdbg::app
