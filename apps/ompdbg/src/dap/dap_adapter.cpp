#include "dap/dap_adapter.hpp"

#include <csignal>

#include "dap/dap_protocol.hpp"
#include "run_control.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app::dap {

namespace {

/// DAP's stop reason for a session event that stops the target; empty for other events.
std::string stop_reason_of(const nlohmann::json& ev, stop_hint hint) {
    std::string kind = ev.value("event", std::string());
    if (kind == "breakpoint-hit") {
        return hint == stop_hint::entry ? "entry" : "breakpoint";
    }
    if (kind == "watchpoint-hit") {
        return "data breakpoint";
    }
    if (kind == "catchpoint-hit") {
        return "exception";
    }
    if (kind == "location") {
        return hint == stop_hint::entry ? "entry" : "step";
    }
    if (kind == "signal" && ev.value("stop", true)) {
        return ev.value("signal", std::string()) == "SIGINT" ? "pause" : "exception";
    }
    return {};
}

std::string trimmed_text(const nlohmann::json& ev) {
    std::string t = ev.value("text", std::string());
    while (!t.empty() && t.front() == '\n') {
        t.erase(t.begin());
    }
    return t;
}

}  // namespace

std::string command_result::console_text() const {
    std::string out;
    for (const auto& l : text) {
        out += l;
        out += '\n';
    }
    if (!error.empty()) {
        out += error;
        out += '\n';
    }
    return out;
}

adapter::adapter(transport& client) : client_(client), session_(true, false, stream_.file(), stream_.file()) {
    register_logpoint_command(session_.commands());
    // The job's ranks are acquired in the middle of `run` (or `attach`): the rank sessions
    // are asked for then, while the job goes on.
    stream_.watch("\"mpi-job\"", [this] { announce_ranks(); });
}

void adapter::announce_ranks() {
    if (announced_ || !announce_allowed_ || ranks_ == nullptr || !ranks_->supported() || session_.job() == nullptr) {
        return;
    }
    std::map<int, pid_t> ranks;
    for (const auto& inf : session_.inferiors()) {
        if (inf->rank >= 0 && inf->process) {
            ranks[inf->rank] = inf->pid != 0 ? inf->pid : inf->process->pid();
        }
    }
    if (ranks.empty()) {
        return;
    }
    announced_ = true;
    std::string message;
    if (!ranks_->announce(ranks, message) && !message.empty()) {
        output("ompdbg dap: " + message + "; the ranks stay in this session\n", "stderr");
    }
}

void adapter::tell_resumed() {
    if (ranks_ != nullptr && ranks_->active()) {
        ranks_->resumed(requester_.get(), session_.selected_tid());
    }
}

int adapter::rank_of_thread(pid_t tid) {
    auto& list = session_.inferiors();
    for (const auto& inf : list) {
        if (inf->process && inf->process->find_thread(tid) != nullptr) {
            return inf->rank;
        }
    }
    return -1;
}

frame_ref adapter::rank_frame(int rank) {
    auto& list = session_.inferiors();
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto& inf = *list[i];
        if (inf.rank != rank || !inf.process || !inf.process->is_alive()) {
            continue;
        }
        pid_t tid = inf.selected_tid;
        if (tid == 0 || inf.process->find_thread(tid) == nullptr) {
            auto threads = inf.process->threads();
            if (threads.empty()) {
                break;
            }
            tid = threads.front()->tid();
        }
        return frame_ref{i, tid, i == session_.current_index() && tid == session_.selected_tid() ? session_.selected_frame() : 0};
    }
    error::send("Rank " + std::to_string(rank) + " has no live process.");
}

nlohmann::json adapter::rank_threads_snapshot(int rank) const {
    std::lock_guard lock(snapshot_lock_);
    auto it = rank_threads_snapshot_.find(rank);
    return it != rank_threads_snapshot_.end() ? it->second : nlohmann::json::array();
}

void adapter::begin_resume(std::string line) {
    {
        std::lock_guard lock(resume_lock_);
        resume_line_ = std::move(line);
    }
    continue_after_requests_ = false;
    forget_ids();
    resuming_ = true;
}

bool adapter::request_breakpoint_pause() {
    std::lock_guard lock(resume_lock_);
    // A step is interrupted for good by a stop (its range is gone); `start` wants its stop
    // at main. Only a plain run or continue can be stopped and continued unnoticed.
    if (!resuming_ || (resume_line_ != "continue" && resume_line_ != "run")) {
        return false;
    }
    breakpoint_pause_ = true;
    return true;
}

void adapter::continue_quietly() {
    continue_after_requests_ = false;
    if (session_.process() == nullptr || !session_.process()->is_alive()) {
        return;
    }
    begin_resume("continue");
    command_result res = run_resuming("continue", stop_hint::none);
    if (!res.ok && !res.error.empty()) {
        output(res.error + "\n", "stderr");
    }
}

void adapter::remember_threads(nlohmann::json list, std::map<int, nlohmann::json> per_rank) {
    std::lock_guard lock(snapshot_lock_);
    threads_snapshot_ = std::move(list);
    rank_threads_snapshot_ = std::move(per_rank);
}

nlohmann::json adapter::threads_snapshot() const {
    std::lock_guard lock(snapshot_lock_);
    return threads_snapshot_;
}

void adapter::send_event(const std::string& name, nlohmann::json body) {
    nlohmann::json event = make_event(name, body);
    client_.send(event);
    if (ranks_ == nullptr || !ranks_->active()) {
        return;
    }
    if (name == "stopped") {
        ranks_->stopped(rank_of_thread(body.value("threadId", 0)), body);
    } else if (name == "thread") {
        ranks_->send_to_rank(rank_of_thread(body.value("threadId", 0)), event);
    } else if (name == "exited" || name == "terminated" || name == "breakpoint") {
        ranks_->send_to_all(event);
    } else if (name == "output" && requester_) {
        requester_->client().send(event);
    }
}

void adapter::output(std::string text, const std::string& category) {
    if (text.empty()) {
        return;
    }
    send_event("output", {{"category", category}, {"output", std::move(text)}});
}

namespace {

/// An MPI job's focus narrowed to the selected rank while it lives, then restored (unless
/// the command replaced the job).
class focus_scope {
public:
    explicit focus_scope(session& s)
        : s_(s), job_(s.job()), ranks_(s.inferiors().size()), saved_(s.focus()),
          narrowed_(job_ != nullptr && saved_.size() > 1) {
        if (narrowed_) {
            s_.focus() = {s_.current_index()};
        }
    }
    focus_scope(const focus_scope&) = delete;
    focus_scope& operator=(const focus_scope&) = delete;
    ~focus_scope() {
        if (narrowed_ && s_.job() == job_ && s_.inferiors().size() == ranks_) {
            s_.focus() = std::move(saved_);
        }
    }

private:
    session& s_;
    const void* job_;
    std::size_t ranks_;
    std::vector<std::size_t> saved_;
    bool narrowed_;
};

}  // namespace

// A request about one thread (its stack, its locals, a variable) must not run in every rank
// of an MPI job's focus: the answer would be the last rank's.
command_result adapter::run(std::string_view line, stop_hint hint) {
    focus_scope narrowed(session_);
    return run_in_focus(line, hint);
}

command_result adapter::run_resuming_in_process(std::string_view line, stop_hint hint) {
    focus_scope narrowed(session_);
    return run_resuming(line, hint);
}

void adapter::call_in_process(const std::function<void()>& f) {
    auto report = [this] {
        command_result ignored;
        translate(stream_.take(), stop_hint::none, ignored);
    };
    focus_scope narrowed(session_);
    try {
        f();
    } catch (...) {
        report();
        throw;
    }
    report();
}

command_result adapter::run_in_focus(std::string_view line, stop_hint hint) {
    if (!pause_pending_) {
        take_interrupt_request();   // a Ctrl-C that came when nothing ran must not end this
    }
    bool ok = session_.execute(line);
    std::vector<nlohmann::json> objects = stream_.take();
    command_result r;
    r.ok = ok;
    // The command's own object is the last one; objects of commands run inside it
    // (a breakpoint's commands, a logpoint's message) come before it.
    for (auto it = objects.rbegin(); it != objects.rend(); ++it) {
        if (it->value("type", std::string()) == "command") {
            r.text = it->value("text", std::vector<std::string>{});
            r.error = it->value("error", std::string());
            if (auto res = it->find("result"); res != it->end() && res->is_object()) {
                r.result = *res;
            }
            objects.erase(std::next(it).base());
            break;
        }
    }
    translate(objects, hint, r);
    return r;
}

// Frame and variable ids stay valid through a console command that did not run the target
// (`x/i $pc`, `print`): the client keeps using them. A stop or the end forgets them
// (translate), and so does a resume request (begin_resume).
command_result adapter::run_resuming(std::string_view line, stop_hint hint) {
    continue_after_requests_ = false;   // whatever runs now decides the next stop
    {
        std::lock_guard lock(resume_lock_);
        resume_line_ = std::string(line);
    }
    resuming_ = true;
    command_result r;
    try {
        r = run_in_focus(line, hint);
    } catch (...) {
        resuming_ = false;
        pause_pending_ = false;
        breakpoint_pause_ = false;
        throw;
    }
    resuming_ = false;
    pause_pending_ = false;
    breakpoint_pause_ = false;
    take_interrupt_request();   // an interrupt repeated after the stop came
    report_breakpoint_changes();
    report_module_changes();
    return r;
}

void adapter::translate(const std::vector<nlohmann::json>& objects, stop_hint hint, command_result& r) {
    std::optional<nlohmann::json> stop;
    std::string stop_reason;
    std::string stop_text;   // the stop's report, for the console unless the stop is quiet
    for (const auto& o : objects) {
        std::string type = o.value("type", std::string());
        if (type == "command") {
            // A command run inside the one we ran: a logpoint's message, breakpoint commands.
            std::string text;
            for (const auto& l : o.value("text", std::vector<std::string>{})) {
                text += l + "\n";
            }
            output(text);
            continue;
        }
        if (type != "event") {
            std::string t = o.value("text", o.value("message", std::string()));
            output(t.empty() ? t : t + "\n");
            continue;
        }
        std::string kind = o.value("event", std::string());
        if (std::string why = stop_reason_of(o, hint); !why.empty()) {
            // A signal's or a catchpoint's report is followed by the location it stopped
            // at: the reason is the first event's.
            if (!stop || kind != "location") {
                stop = o;
                stop_reason = why;
            }
            stop_text += trimmed_text(o) + "\n";
        } else if (kind == "thread-created") {
            send_event("thread", {{"reason", "started"}, {"threadId", o.value("lwp", 0)}});
        } else if (kind == "thread-exited") {
            send_event("thread", {{"reason", "exited"}, {"threadId", o.value("lwp", 0)}});
        } else if (kind == "exited" || kind == "terminated" || kind == "starter-exited") {
            output(trimmed_text(o) + "\n");
            if (!session_.job() || kind == "starter-exited") {
                int code = kind == "terminated" ? 128 : o.value("exit_code", 0);
                remember_threads(nlohmann::json::array());
                resuming_ = false;
                send_event("exited", {{"exitCode", code}});
                forget_ids();
                terminated();
                r.ended = true;
            }
        } else {
            std::string t = trimmed_text(o);
            output(t.empty() ? t : t + "\n");
        }
    }
    if (stop && session_.process() != nullptr && breakpoint_pause_ && !pause_pending_ && stop_reason == "pause") {
        // The quiet stop for a breakpoint request: the client never hears of it.
        breakpoint_pause_ = false;
        continue_after_requests_ = true;
        forget_ids();
        return;
    }
    output(stop_text);
    if (stop && session_.process() != nullptr) {
        if (pause_pending_ && stop_reason != "breakpoint" && stop_reason != "data breakpoint") {
            stop_reason = "pause";
        }
        pause_pending_ = false;
        forget_ids();
        nlohmann::json body{{"reason", stop_reason},
                            {"threadId", session_.selected_tid()},
                            {"allThreadsStopped", true},
                            {"description", trimmed_text(*stop)}};
        if (stop_reason == "breakpoint" && stop->contains("breakpoint")) {
            body["hitBreakpointIds"] = nlohmann::json::array({(*stop)["breakpoint"]});
        }
        if (stop_reason == "exception") {
            body["text"] = stop->value("signal", stop->value("event", std::string()));
        }
        // The client asks for threads and stacks as soon as it reads this: from now on
        // those requests wait for the main thread (not the last stop's snapshot).
        resuming_ = false;
        send_event("stopped", body);
        r.stopped = true;
    }
}

void adapter::relay_model_output() {
    std::vector<nlohmann::json> objects = stream_.take();
    if (!objects.empty()) {
        command_result ignored;
        translate(objects, stop_hint::none, ignored);
    }
}

model_access::model_access(adapter& a) : a_(a) {
    for (auto& inf : a.model().inferiors()) {
        if (inf && inf->process) {
            inf->process->forget_cached_memory();
        }
    }
}

// A destructor must not throw: a client gone while its output is sent is the reader's to see.
model_access::~model_access() {
    try {
        a_.relay_model_output();
    } catch (const std::exception&) {
    }
}

void adapter::report_breakpoint_changes() {
    for (auto& [number, told] : told_verified_) {
        auto it = session_.breakpoints().find(number);
        if (it == session_.breakpoints().end()) {
            continue;
        }
        const breakpoint& bp = it->second;
        bool verified = !bp.pending && !bp.locations.empty();
        if (verified == told) {
            continue;
        }
        told = verified;
        nlohmann::json b{{"id", number}, {"verified", verified}};
        if (verified) {
            b["line"] = bp.locations.front().line;
            if (!bp.locations.front().file.empty()) {
                b["source"] = {{"path", bp.locations.front().file}};
            }
        }
        send_event("breakpoint", {{"reason", "changed"}, {"breakpoint", b}});
    }
}

void adapter::forget_ids() {
    frames_.clear();
    variables_.clear();
}

void adapter::select(const frame_ref& f) {
    if (f.inferior >= session_.inferiors().size()) {
        error::send("That process is gone.");
    }
    if (session_.current_index() != f.inferior) {
        session_.switch_to(f.inferior);
    }
    if (session_.target() == nullptr || session_.target()->find_thread(f.tid) == nullptr) {
        error::send("Thread " + std::to_string(f.tid) + " is gone.");
    }
    if (session_.selected_tid() != f.tid) {
        session_.select_thread(f.tid);
    }
    session_.select_frame(f.level);
}

frame_ref adapter::thread_frame(pid_t tid) {
    auto& list = session_.inferiors();
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i]->process && list[i]->process->find_thread(tid) != nullptr) {
            return frame_ref{i, tid, 0};
        }
    }
    error::send("Unknown thread " + std::to_string(tid) + ".");
}

int adapter::frame_id(const frame_ref& f) {
    frames_.push_back(f);
    return static_cast<int>(frames_.size());
}

const frame_ref& adapter::frame(std::int64_t id) const {
    if (id < 1 || static_cast<std::size_t>(id) > frames_.size()) {
        error::send("Unknown frame id " + std::to_string(id) + " (the target ran since it was given).");
    }
    return frames_[static_cast<std::size_t>(id - 1)];
}

int adapter::variables_reference(variable_ref v) {
    variables_.push_back(std::move(v));
    return static_cast<int>(variables_.size());
}

const variable_ref& adapter::variables(std::int64_t id) const {
    if (id < 1 || static_cast<std::size_t>(id) > variables_.size()) {
        error::send("Unknown variablesReference " + std::to_string(id) + " (the target ran since it was given).");
    }
    return variables_[static_cast<std::size_t>(id - 1)];
}

void adapter::terminated() {
    if (!terminated_sent_) {
        terminated_sent_ = true;
        send_event("terminated");
    }
}

void adapter::end_target(bool kill) {
    if (!has_target()) {
        return;
    }
    run(kill ? "kill" : "detach");
    if (has_target()) {
        session_.end_target();   // what batch mode does at its end
        stream_.take();
    }
}

}  // namespace ompdbg::app::dap
