// modules and the `module` events: the program and the shared libraries of every process
// of the session, as `info sharedlibrary` knows them, one module per file.
#include <fmt/format.h>

#include <map>

#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"

namespace ompdbg::app::dap {

namespace {

nlohmann::json module_json(const tracer::loaded_module& m) {
    nlohmann::json j{{"id", m.path.string()}, {"name", m.path.filename().string()}, {"path", m.path.string()}};
    bool symbols = m.elf && m.elf->has_debug_info();
    j["symbolStatus"] = !m.elf ? "Not loaded (file not readable)" : symbols ? "Symbols loaded." : "No debug information.";
    if (m.end > m.start) {
        j["addressRange"] = fmt::format("0x{:x}-0x{:x}", m.start, m.end);
    }
    return j;
}

/// Every module of every live process, by path (the first process's copy describes it).
std::map<std::string, nlohmann::json> current_modules(adapter& a) {
    std::map<std::string, nlohmann::json> out;
    for (const auto& inf : a.model().inferiors()) {
        if (!inf->process || !inf->process->is_alive()) {
            continue;
        }
        try {
            for (const auto& m : inf->process->modules()) {
                if (!m.path.empty() && m.path.string()[0] == '/') {
                    out.emplace(m.path.string(), module_json(m));
                }
            }
        } catch (const std::exception&) {
            // a process that went away meanwhile has no modules to show
        }
    }
    return out;
}

void modules(adapter& a, request& r) {
    nlohmann::json list = nlohmann::json::array();
    for (auto& [path, m] : current_modules(a)) {
        list.push_back(m);
    }
    r.respond({{"modules", page_of(list, r.arguments().value("startModule", 0), r.arguments().value("moduleCount", 0))},
               {"totalModules", list.size()}});
}

}  // namespace

void adapter::report_module_changes() {
    auto now = current_modules(*this);
    for (auto& [path, m] : now) {
        if (!told_modules_.count(path)) {
            send_event("module", {{"reason", "new"}, {"module", m}});
        }
    }
    for (const auto& path : told_modules_) {
        if (!now.count(path)) {
            send_event("module", {{"reason", "removed"}, {"module", {{"id", path}, {"name", path}}}});
        }
    }
    told_modules_.clear();
    for (auto& [path, m] : now) {
        told_modules_.insert(path);
    }
}

void register_module_handlers(handler_table& t) {
    t["modules"] = modules;
}

}  // namespace ompdbg::app::dap
