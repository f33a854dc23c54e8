// initialize, launch, attach, configurationDone, disconnect, terminate: the life of the
// debuggee as VS Code drives it (launch/attach, then the `initialized` event, then the
// breakpoints and configurationDone, which starts the program).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app::dap {

nlohmann::json server_capabilities() {
    return {
        {"supportsConfigurationDoneRequest", true},
        {"supportsFunctionBreakpoints", true},
        {"supportsConditionalBreakpoints", true},
        {"supportsHitConditionalBreakpoints", true},
        {"supportsLogPoints", true},
        {"supportsEvaluateForHovers", true},
        {"supportsSetVariable", true},
        {"supportsTerminateRequest", true},
        {"supportTerminateDebuggee", true},
        {"supportsSteppingGranularity", true},
        {"supportsDisassembleRequest", true},
        {"supportsReadMemoryRequest", true},
        {"supportsModulesRequest", true},
        {"exceptionBreakpointFilters",
         nlohmann::json::array(
             {{{"filter", "fatal-signals"},
               {"label", "Fatal signals"},
               {"description", "Stop when the program gets SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT"},
               {"default", true}},
              {{"filter", "other-signals"},
               {"label", "Other signals"},
               {"description", "Stop when the program gets SIGUSR1, SIGUSR2, SIGALRM, SIGTERM, SIGHUP, SIGPIPE or SIGQUIT"},
               {"default", true}}})},
    };
}

namespace {

/// `program` as exec would find it: a name without '/' is looked up in PATH.
std::filesystem::path resolve_program(const std::string& program) {
    if (program.find('/') != std::string::npos) {
        return std::filesystem::absolute(program);
    }
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        std::size_t end = dirs.find(':', start);
        std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    error::send(program + ": not found in PATH");
}

void apply_environment(const request& r) {
    auto it = r.arguments().find("env");
    if (it == r.arguments().end() || it->is_null()) {
        return;
    }
    if (!it->is_object()) {
        error::send("\"env\" must be an object of NAME: VALUE");
    }
    for (auto& [name, value] : it->items()) {
        if (value.is_null()) {
            ::unsetenv(name.c_str());
        } else if (value.is_string()) {
            ::setenv(name.c_str(), value.get<std::string>().c_str(), 1);
        } else {
            ::setenv(name.c_str(), value.dump().c_str(), 1);
        }
    }
}

void initialize(adapter& a, request& r) {
    a.set_initialized();
    if (a.ranks() != nullptr) {
        a.ranks()->set_client_supports(r.bool_arg("supportsStartDebuggingRequest", false));
    }
    r.respond(server_capabilities());
}

void launch(adapter& a, request& r) {
    std::string program = r.string_arg("program");
    if (program.empty()) {
        error::send("launch needs \"program\": the path of the program to debug");
    }
    if (a.target_origin() != adapter::origin::none) {
        error::send("a program is already being debugged in this session");
    }
    std::vector<std::string> args;
    if (auto it = r.arguments().find("args"); it != r.arguments().end() && it->is_array()) {
        for (const auto& v : *it) {
            args.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        }
    }
    if (std::string cwd = r.string_arg("cwd"); !cwd.empty() && ::chdir(cwd.c_str()) != 0) {
        error::send("cannot use \"cwd\" " + cwd + ": " + std::strerror(errno));
    }
    apply_environment(r);
    std::filesystem::path path;
    try {
        path = resolve_program(program);
        a.model().set_program(path, args);
    } catch (const std::exception& e) {
        error::send("cannot launch " + program + ": " + e.what());
    }
    a.set_origin(adapter::origin::launched);
    a.set_stop_on_entry(r.bool_arg("stopOnEntry", false));
    if (a.ranks() != nullptr) {
        a.ranks()->set_configuration_type(r.string_arg("type"));
    }
    r.respond();
    a.send_event("initialized");
    a.allow_rank_announce();
}

void attach(adapter& a, request& r) {
    auto it = r.arguments().find("pid");
    std::string pid;
    if (it != r.arguments().end() && it->is_number_integer()) {
        pid = std::to_string(it->get<long long>());
    } else if (it != r.arguments().end() && it->is_string()) {
        pid = it->get<std::string>();
    }
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) {
        error::send("attach needs \"pid\": the process id to attach to");
    }
    if (a.target_origin() != adapter::origin::none) {
        error::send("a program is already being debugged in this session");
    }
    command_result res = a.run("attach " + pid, stop_hint::entry);
    if (!res.ok) {
        error::send("cannot attach to " + pid + ": " + res.error);
    }
    a.set_origin(adapter::origin::attached);
    a.set_stop_on_entry(r.bool_arg("stopOnEntry", false));
    if (a.ranks() != nullptr) {
        a.ranks()->set_configuration_type(r.string_arg("type"));
    }
    r.respond();
    a.report_module_changes();
    a.send_event("initialized");
    a.allow_rank_announce();
    a.announce_ranks();   // an mpirun's pid: its ranks were acquired by the attach
}

void configuration_done(adapter& a, request& r) {
    bool resumes = a.target_origin() == adapter::origin::launched ||
                   (a.target_origin() == adapter::origin::attached && !a.stop_on_entry());
    const bool entry = a.stop_on_entry();
    if (resumes) {
        a.begin_resume(a.target_origin() == adapter::origin::launched ? (entry ? "start" : "run") : "continue");
    }
    r.respond();
    if (a.target_origin() == adapter::origin::launched) {
        command_result res = a.run_resuming(entry ? "start" : "run", entry ? stop_hint::entry : stop_hint::none);
        if (!res.ok) {
            a.output(res.error + "\n", "stderr");
            if (!a.has_target()) {
                a.terminated();
            }
        }
    } else if (a.target_origin() == adapter::origin::attached && !a.stop_on_entry()) {
        a.tell_resumed();
        a.send_event("continued", {{"threadId", a.model().selected_tid()}, {"allThreadsContinued", true}});
        a.run_resuming("continue", stop_hint::none);
    }
}

void disconnect(adapter& a, request& r) {
    bool kill = r.bool_arg("terminateDebuggee", a.target_origin() != adapter::origin::attached);
    a.end_target(kill);
    r.respond();
    a.finish();
}

void terminate(adapter& a, request& r) {
    r.respond();
    a.end_target(true);
    a.terminated();
}

}  // namespace

void register_launch_handlers(handler_table& t) {
    t["initialize"] = initialize;
    t["launch"] = launch;
    t["attach"] = attach;
    t["configurationDone"] = configuration_done;
    t["disconnect"] = disconnect;
    t["terminate"] = terminate;
}

}  // namespace ompdbg::app::dap
