#include "ompdbg/debugger/run/signal_policy.hpp"

#include <algorithm>
#include <cctype>

namespace ompdbg::debugger {

namespace {

struct default_row {
    const char* name;
    int host;
    bool stop, print, pass;
    const char* description;
};

// gdb 13's `info signals` on Linux x86-64, in its order, with its defaults.
constexpr default_row defaults[] = {
    {"SIGHUP", 1, true, true, true, "Hangup"},
    {"SIGINT", 2, true, true, false, "Interrupt"},
    {"SIGQUIT", 3, true, true, true, "Quit"},
    {"SIGILL", 4, true, true, true, "Illegal instruction"},
    {"SIGTRAP", 5, true, true, false, "Trace/breakpoint trap"},
    {"SIGABRT", 6, true, true, true, "Aborted"},
    {"SIGEMT", 0, true, true, true, "Emulation trap"},
    {"SIGFPE", 8, true, true, true, "Arithmetic exception"},
    {"SIGKILL", 9, true, true, true, "Killed"},
    {"SIGBUS", 7, true, true, true, "Bus error"},
    {"SIGSEGV", 11, true, true, true, "Segmentation fault"},
    {"SIGSYS", 31, true, true, true, "Bad system call"},
    {"SIGPIPE", 13, true, true, true, "Broken pipe"},
    {"SIGALRM", 14, false, false, true, "Alarm clock"},
    {"SIGTERM", 15, true, true, true, "Terminated"},
    {"SIGURG", 23, false, false, true, "Urgent I/O condition"},
    {"SIGSTOP", 19, true, true, true, "Stopped (signal)"},
    {"SIGTSTP", 20, true, true, true, "Stopped (user)"},
    {"SIGCONT", 18, true, true, true, "Continued"},
    {"SIGCHLD", 17, false, false, true, "Child status changed"},
    {"SIGTTIN", 21, true, true, true, "Stopped (tty input)"},
    {"SIGTTOU", 22, true, true, true, "Stopped (tty output)"},
    {"SIGIO", 29, false, false, true, "I/O possible"},
    {"SIGXCPU", 24, true, true, true, "CPU time limit exceeded"},
    {"SIGXFSZ", 25, true, true, true, "File size limit exceeded"},
    {"SIGVTALRM", 26, false, false, true, "Virtual timer expired"},
    {"SIGPROF", 27, false, false, true, "Profiling timer expired"},
    {"SIGWINCH", 28, false, false, true, "Window size changed"},
    {"SIGLOST", 0, true, true, true, "Resource lost"},
    {"SIGUSR1", 10, true, true, true, "User defined signal 1"},
    {"SIGUSR2", 12, true, true, true, "User defined signal 2"},
    {"SIGPWR", 30, true, true, true, "Power fail/restart"},
    {"SIGPOLL", 0, false, false, true, "Pollable event occurred"},
    {"SIGWIND", 0, true, true, true, "SIGWIND"},
    {"SIGPHONE", 0, true, true, true, "SIGPHONE"},
    {"SIGWAITING", 0, false, false, true, "Process's LWPs are blocked"},
    {"SIGLWP", 0, false, false, true, "Signal LWP"},
    {"SIGDANGER", 0, true, true, true, "Swap space dangerously low"},
    {"SIGGRANT", 0, true, true, true, "Monitor mode granted"},
    {"SIGRETRACT", 0, true, true, true, "Need to relinquish monitor mode"},
    {"SIGMSG", 0, true, true, true, "Monitor mode data available"},
    {"SIGSOUND", 0, true, true, true, "Sound completed"},
    {"SIGSAK", 0, true, true, true, "Secure attention"},
    {"SIGPRIO", 0, false, false, true, "SIGPRIO"},
    {"SIG33", 33, true, true, true, "Real-time event 33"},
    {"SIG34", 34, true, true, true, "Real-time event 34"},
    {"SIG35", 35, true, true, true, "Real-time event 35"},
    {"SIG36", 36, true, true, true, "Real-time event 36"},
    {"SIG37", 37, true, true, true, "Real-time event 37"},
    {"SIG38", 38, true, true, true, "Real-time event 38"},
    {"SIG39", 39, true, true, true, "Real-time event 39"},
    {"SIG40", 40, true, true, true, "Real-time event 40"},
    {"SIG41", 41, true, true, true, "Real-time event 41"},
    {"SIG42", 42, true, true, true, "Real-time event 42"},
    {"SIG43", 43, true, true, true, "Real-time event 43"},
    {"SIG44", 44, true, true, true, "Real-time event 44"},
    {"SIG45", 45, true, true, true, "Real-time event 45"},
    {"SIG46", 46, true, true, true, "Real-time event 46"},
    {"SIG47", 47, true, true, true, "Real-time event 47"},
    {"SIG48", 48, true, true, true, "Real-time event 48"},
    {"SIG49", 49, true, true, true, "Real-time event 49"},
    {"SIG50", 50, true, true, true, "Real-time event 50"},
    {"SIG51", 51, true, true, true, "Real-time event 51"},
    {"SIG52", 52, true, true, true, "Real-time event 52"},
    {"SIG53", 53, true, true, true, "Real-time event 53"},
    {"SIG54", 54, true, true, true, "Real-time event 54"},
    {"SIG55", 55, true, true, true, "Real-time event 55"},
    {"SIG56", 56, true, true, true, "Real-time event 56"},
    {"SIG57", 57, true, true, true, "Real-time event 57"},
    {"SIG58", 58, true, true, true, "Real-time event 58"},
    {"SIG59", 59, true, true, true, "Real-time event 59"},
    {"SIG60", 60, true, true, true, "Real-time event 60"},
    {"SIG61", 61, true, true, true, "Real-time event 61"},
    {"SIG62", 62, true, true, true, "Real-time event 62"},
    {"SIG63", 63, true, true, true, "Real-time event 63"},
    {"SIGCANCEL", 0, false, false, true, "LWP internal signal"},
    {"SIG32", 32, true, true, true, "Real-time event 32"},
    {"SIG64", 64, true, true, true, "Real-time event 64"},
    {"SIG65", 0, true, true, true, "Real-time event 65"},
    {"SIG66", 0, true, true, true, "Real-time event 66"},
    {"SIG67", 0, true, true, true, "Real-time event 67"},
    {"SIG68", 0, true, true, true, "Real-time event 68"},
    {"SIG69", 0, true, true, true, "Real-time event 69"},
    {"SIG70", 0, true, true, true, "Real-time event 70"},
    {"SIG71", 0, true, true, true, "Real-time event 71"},
    {"SIG72", 0, true, true, true, "Real-time event 72"},
    {"SIG73", 0, true, true, true, "Real-time event 73"},
    {"SIG74", 0, true, true, true, "Real-time event 74"},
    {"SIG75", 0, true, true, true, "Real-time event 75"},
    {"SIG76", 0, true, true, true, "Real-time event 76"},
    {"SIG77", 0, true, true, true, "Real-time event 77"},
    {"SIG78", 0, true, true, true, "Real-time event 78"},
    {"SIG79", 0, true, true, true, "Real-time event 79"},
    {"SIG80", 0, true, true, true, "Real-time event 80"},
    {"SIG81", 0, true, true, true, "Real-time event 81"},
    {"SIG82", 0, true, true, true, "Real-time event 82"},
    {"SIG83", 0, true, true, true, "Real-time event 83"},
    {"SIG84", 0, true, true, true, "Real-time event 84"},
    {"SIG85", 0, true, true, true, "Real-time event 85"},
    {"SIG86", 0, true, true, true, "Real-time event 86"},
    {"SIG87", 0, true, true, true, "Real-time event 87"},
    {"SIG88", 0, true, true, true, "Real-time event 88"},
    {"SIG89", 0, true, true, true, "Real-time event 89"},
    {"SIG90", 0, true, true, true, "Real-time event 90"},
    {"SIG91", 0, true, true, true, "Real-time event 91"},
    {"SIG92", 0, true, true, true, "Real-time event 92"},
    {"SIG93", 0, true, true, true, "Real-time event 93"},
    {"SIG94", 0, true, true, true, "Real-time event 94"},
    {"SIG95", 0, true, true, true, "Real-time event 95"},
    {"SIG96", 0, true, true, true, "Real-time event 96"},
    {"SIG97", 0, true, true, true, "Real-time event 97"},
    {"SIG98", 0, true, true, true, "Real-time event 98"},
    {"SIG99", 0, true, true, true, "Real-time event 99"},
    {"SIG100", 0, true, true, true, "Real-time event 100"},
    {"SIG101", 0, true, true, true, "Real-time event 101"},
    {"SIG102", 0, true, true, true, "Real-time event 102"},
    {"SIG103", 0, true, true, true, "Real-time event 103"},
    {"SIG104", 0, true, true, true, "Real-time event 104"},
    {"SIG105", 0, true, true, true, "Real-time event 105"},
    {"SIG106", 0, true, true, true, "Real-time event 106"},
    {"SIG107", 0, true, true, true, "Real-time event 107"},
    {"SIG108", 0, true, true, true, "Real-time event 108"},
    {"SIG109", 0, true, true, true, "Real-time event 109"},
    {"SIG110", 0, true, true, true, "Real-time event 110"},
    {"SIG111", 0, true, true, true, "Real-time event 111"},
    {"SIG112", 0, true, true, true, "Real-time event 112"},
    {"SIG113", 0, true, true, true, "Real-time event 113"},
    {"SIG114", 0, true, true, true, "Real-time event 114"},
    {"SIG115", 0, true, true, true, "Real-time event 115"},
    {"SIG116", 0, true, true, true, "Real-time event 116"},
    {"SIG117", 0, true, true, true, "Real-time event 117"},
    {"SIG118", 0, true, true, true, "Real-time event 118"},
    {"SIG119", 0, true, true, true, "Real-time event 119"},
    {"SIG120", 0, true, true, true, "Real-time event 120"},
    {"SIG121", 0, true, true, true, "Real-time event 121"},
    {"SIG122", 0, true, true, true, "Real-time event 122"},
    {"SIG123", 0, true, true, true, "Real-time event 123"},
    {"SIG124", 0, true, true, true, "Real-time event 124"},
    {"SIG125", 0, true, true, true, "Real-time event 125"},
    {"SIG126", 0, true, true, true, "Real-time event 126"},
    {"SIG127", 0, true, true, true, "Real-time event 127"},
    {"SIGINFO", 0, true, true, true, "Information request"},
    {"EXC_BAD_ACCESS", 0, true, true, true, "Could not access memory"},
    {"EXC_BAD_INSTRUCTION", 0, true, true, true, "Illegal instruction/operand"},
    {"EXC_ARITHMETIC", 0, true, true, true, "Arithmetic exception"},
    {"EXC_EMULATION", 0, true, true, true, "Emulation instruction"},
    {"EXC_SOFTWARE", 0, true, true, true, "Software generated exception"},
    {"EXC_BREAKPOINT", 0, true, true, true, "Breakpoint"},
    {"SIGLIBRT", 0, false, false, true, "librt internal signal"},
};

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
           });
}

}  // namespace

signal_policy::signal_policy() {
    for (const auto& d : defaults) {
        rows_.push_back({d.name, d.host, d.stop, d.print, d.pass, d.description});
    }
}

signal_row* signal_policy::find(std::string_view word) {
    if (!word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        int n = 0;
        for (char c : word) {
            n = n * 10 + (c - '0');
            if (n > 1000) {
                break;
            }
        }
        // gdb numbers signals in its own table order (10 is SIGBUS, not SIGUSR1).
        if (n < 1 || n > 15) {
            return nullptr;
        }
        return &rows_[static_cast<std::size_t>(n - 1)];
    }
    for (auto& r : rows_) {
        if (iequals(r.name, word)) {
            return &r;
        }
    }
    return nullptr;
}

const signal_row* signal_policy::for_host(int signo) const {
    for (const auto& r : rows_) {
        if (r.host == signo) {
            return &r;
        }
    }
    return nullptr;
}

bool signal_policy::stops(int signo) const {
    const auto* r = for_host(signo);
    return r == nullptr || r->stop;
}

bool signal_policy::prints(int signo) const {
    const auto* r = for_host(signo);
    return r == nullptr || r->print;
}

bool signal_policy::passes(int signo) const {
    const auto* r = for_host(signo);
    return r == nullptr || r->pass;
}

}  // namespace ompdbg::debugger
