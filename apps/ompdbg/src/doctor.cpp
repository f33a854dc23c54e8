// `ompdbg doctor`: the subject from the command line, the checks of the model
// (ompdbg/debugger/doctor/doctor.hpp), and their report as text or one JSON object.
#include "doctor.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "output.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "ompdbg/debugger/doctor/doctor.hpp"

namespace ompdbg::app {

using debugger::doctor_check;
using debugger::doctor_status;

namespace {

std::string_view status_word(doctor_status s) {
    switch (s) {
        case doctor_status::ok: return "ok";
        case doctor_status::info: return "info";
        case doctor_status::warn: return "warn";
        case doctor_status::missing: return "missing";
    }
    return "?";
}

}  // namespace

int doctor_main(const std::vector<std::string>& args, bool json, const debugger::plugin_trust_policy& policy) {
    output out(json);
    debugger::doctor_subject subject;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--host" && i + 1 < args.size()) {
            subject.host = args[++i];
        } else if (args[i].rfind("--host=", 0) == 0) {
            subject.host = args[i].substr(7);
        } else {
            rest.push_back(args[i]);
        }
    }
    std::optional<pid_t> pid;
    if (rest.size() == 1) {
        const std::string& a = rest[0];
        pid_t n = 0;
        auto [p, ec] = std::from_chars(a.data(), a.data() + a.size(), n);
        if (ec == std::errc() && p == a.data() + a.size() && n > 0) {
            pid = n;
        }
    }
    if (rest.size() > 1 || (subject.host && (subject.host->empty() || (!rest.empty() && !pid)))) {
        out.error("ompdbg: usage: ompdbg doctor [PROG | PID] | ompdbg [--rsh CMD] doctor --host HOST [PID]");
        return 2;
    }
    std::string what = "this machine";
    if (subject.host) {
        subject.rsh = debugger::remote_shell_of_environment();
        what = fmt::format("host {}", *subject.host);
    }
    if (pid) {
        subject.pid = pid;
        what = subject.host ? fmt::format("process {} on host {}", *pid, *subject.host) : fmt::format("process {}", *pid);
    } else if (!rest.empty()) {
        subject.program = rest[0];
        what = rest[0];
    }
    auto checks = debugger::run_doctor(subject, policy);
    bool missing = std::any_of(checks.begin(), checks.end(),
                               [](const doctor_check& c) { return c.status == doctor_status::missing; });
    out.begin_command("doctor");
    nlohmann::json arr = nlohmann::json::array();
    out.line(fmt::format("ompdbg doctor: {}", what));
    for (const auto& c : checks) {
        out.line(fmt::format("  {:<8} {:<15} {}", status_word(c.status), c.name, c.found));
        if (!c.fix.empty() && c.status != doctor_status::ok) {
            out.line(fmt::format("  {:<8} {:<15} fix: {}", "", "", c.fix));
        }
        nlohmann::json j{{"check", c.name}, {"status", status_word(c.status)}, {"found", c.found}};
        if (!c.fix.empty()) {
            j["fix"] = c.fix;
        }
        arr.push_back(std::move(j));
    }
    out.line(missing ? "Some pieces are missing (see fix: lines)." : "Everything needed was found.");
    out.field("subject", what);
    out.field("checks", std::move(arr));
    out.field("complete", !missing);
    out.end_command(true);
    out.flush();
    return missing ? 1 : 0;
}

}  // namespace ompdbg::app
