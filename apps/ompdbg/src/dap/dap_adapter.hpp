#pragma once
/// The state of one DAP session: the debugger session it drives, what the client was told
/// (frame ids, variable references), and the translation of the session's events into DAP
/// events. The requests that look at a stopped target (threads, stacks, variables) call the
/// model (libdebugger) through `model_access`; those that run it or change breakpoints still
/// run CLI commands, in JSON mode, so that their stops and results come back as data
/// (docs/json.md), until run control and breakpoint resolution move into the model.

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dap/dap_capture.hpp"
#include "dap/dap_ranks.hpp"
#include "dap/dap_transport.hpp"
#include "session.hpp"

namespace ompdbg::app::dap {

/// What a command's stop means to the client when the session reports a location.
enum class stop_hint { none, step, entry };

/// The outcome of one CLI command run in the session.
struct command_result {
    bool ok = false;
    std::vector<std::string> text;   ///< the lines text mode would print
    std::string error;               ///< the message of a failed command
    nlohmann::json result = nlohmann::json::object();
    bool stopped = false;   ///< a `stopped` event was sent for it
    bool ended = false;     ///< the debuggee ended during it (`exited`/`terminated` sent)
    /// Text as the debug console shows it: the command's lines, then its error.
    std::string console_text() const;
};

/// A frame as the client names it (the `id` of a stackTrace frame).
struct frame_ref {
    std::size_t inferior = 0;
    pid_t tid = 0;
    int level = 0;
};

/// What a variablesReference stands for.
struct variable_ref {
    enum class kind { locals, arguments, icvs, children } what = kind::locals;
    frame_ref frame;
    std::string expression;   ///< children: the expression whose children are listed
    /// children: the part of `expression`'s value to list, as child indexes one level at a
    /// time (a base class or a container's element has no expression of its own).
    std::vector<std::size_t> path;
};

class adapter {
public:
    explicit adapter(transport& client);
    adapter(const adapter&) = delete;
    adapter& operator=(const adapter&) = delete;

    session& model() { return session_; }
    transport& client() { return client_; }

    /// Runs one CLI command line in the selected process only (in an MPI job: the selected
    /// thread's rank, not every rank of the focus); sends the DAP events its session events
    /// mean (stopped, thread, exited, terminated, output) after it. Never throws for a
    /// failing command.
    command_result run(std::string_view line, stop_hint hint = stop_hint::none);
    /// run() for a command that resumes the target, or one typed in the console: it acts on
    /// every rank of the focus, as at the CLI's prompt; `pause` may interrupt it meanwhile.
    command_result run_resuming(std::string_view line, stop_hint hint);
    /// run_resuming() in the selected process only: a rank session's console acts on its rank.
    command_result run_resuming_in_process(std::string_view line, stop_hint hint);
    /// Calls the model (`f`) as run() runs a command: in the selected process only (in an
    /// MPI job: the selected thread's rank), then sends what the model reported meanwhile
    /// (output events: the agent loaded or not used). Exceptions of `f` propagate.
    void call_in_process(const std::function<void()>& f);
    /// Whether a resuming command is under way (the server's reader thread asks).
    bool is_resuming() const { return resuming_; }
    /// Marks a resume as under way before its request is answered, so that a `pause` that
    /// follows the answer interrupts it; run_resuming() ends the mark. `line` is the
    /// resuming command (`continue`, `next`, ...).
    void begin_resume(std::string line);
    /// A request that changes breakpoints came while a `continue` runs: the target is to be
    /// stopped quietly (no `stopped` event), the queued requests answered, then continued
    /// (as lldb-dap does); false while a step runs (its breakpoints wait for its stop).
    bool request_breakpoint_pause();
    bool breakpoint_pause_pending() const { return breakpoint_pause_; }
    /// After such a quiet stop: the `continue` to run once the queued requests are answered.
    bool continue_after_requests() const { return continue_after_requests_; }
    /// A request that decides what the target does next (pause, a resume, disconnect)
    /// cancels that continue.
    void cancel_continue_after_requests() { continue_after_requests_ = false; }
    /// Runs the resume interrupted by the quiet stop again; the client was never told of it.
    void continue_quietly();
    /// The thread list last answered, for a `threads` request that comes while the target
    /// runs (the reader thread answers it: the session is busy until the stop).
    void remember_threads(nlohmann::json list, std::map<int, nlohmann::json> per_rank = {});
    nlohmann::json threads_snapshot() const;
    /// A `pause` came while the target ran: the next stop is reported as a pause, and the
    /// reader repeats the interrupt until the stop comes.
    void request_pause() { pause_pending_ = true; }
    bool pause_pending() const { return pause_pending_; }

    /// Sends an event to the client and, when there are rank sessions, to those it concerns:
    /// `stopped` to every rank (dap_ranks.hpp), `thread` to the thread's rank, `exited`,
    /// `terminated`, `breakpoint` to all, `output` also to the rank session whose request
    /// is being handled. Main thread only.
    void send_event(const std::string& name, nlohmann::json body = nlohmann::json::object());
    /// An `output` event (category console unless given).
    void output(std::string text, const std::string& category = "console");

    // ---- rank sessions (dap_ranks.hpp) ----
    void set_rank_sessions(rank_sessions* r) { ranks_ = r; }
    rank_sessions* ranks() { return ranks_; }
    /// The rank session whose request the main thread handles (nullptr: the client's).
    void set_requester(std::shared_ptr<rank_connection> c) { requester_ = std::move(c); }
    /// The rank of that session; -1 for the client's requests.
    int requester_rank() const { return requester_ ? requester_->rank() : -1; }
    /// The client was told `initialized`: the job's ranks may be announced from now on.
    void allow_rank_announce() { announce_allowed_ = true; }
    /// Asks the client for one session per rank once the job's ranks are acquired (and the
    /// client can start them); at most once.
    void announce_ranks();
    /// A request resumed the job: the other sessions are told `continued`.
    void tell_resumed();
    /// The rank of thread `tid`'s process; -1 if none.
    int rank_of_thread(pid_t tid);
    /// The frame a rank session's request without a frame means: its rank's selected (else
    /// first) thread, innermost frame. Throws for a rank that is gone.
    frame_ref rank_frame(int rank);
    /// The thread lists of the last `threads` answer, one per rank, as rank sessions see
    /// them (while the target runs).
    nlohmann::json rank_threads_snapshot(int rank) const;

    // ---- selection ----
    /// Makes `f` the session's current inferior, thread and frame. Throws when the thread
    /// is gone.
    void select(const frame_ref& f);
    /// The frame_ref of the innermost frame of thread `tid` (any inferior). Throws for an
    /// unknown thread.
    frame_ref thread_frame(pid_t tid);

    // ---- ids handed to the client, valid until the target resumes ----
    int frame_id(const frame_ref& f);
    const frame_ref& frame(std::int64_t id) const;
    int variables_reference(variable_ref v);
    const variable_ref& variables(std::int64_t id) const;

    // ---- the debuggee ----
    enum class origin { none, launched, attached };
    origin target_origin() const { return origin_; }
    void set_origin(origin o) { origin_ = o; }
    bool stop_on_entry() const { return stop_on_entry_; }
    void set_stop_on_entry(bool on) { stop_on_entry_ = on; }
    bool has_target() { return session_.process() != nullptr || session_.job() != nullptr; }
    /// Sends `terminated` once.
    void terminated();
    /// Ends the target: kill (launched, or `terminate`) or detach; quietly.
    void end_target(bool kill);
    /// After `disconnect`: the server stops reading.
    void finish() { finished_ = true; }
    bool finished() const { return finished_; }
    /// The session breakpoint numbers the client set per source path (setBreakpoints
    /// replaces a source's set) and under "" the function breakpoints.
    std::map<std::string, std::vector<int>>& breakpoint_sets() { return breakpoint_sets_; }
    /// What the client asked for per source path (as dap_breakpoints.cpp records it).
    std::map<std::string, nlohmann::json>& breakpoint_requests() { return breakpoint_requests_; }
    /// Remembers what the client was told of breakpoint `number` (verified or not).
    void note_breakpoint(int number, bool verified) { told_verified_[number] = verified; }
    /// Sends a `breakpoint` event (reason changed) for each breakpoint of the client whose
    /// pending state changed since it was told (a pending one resolved when a library or
    /// an MPI job's ranks were loaded).
    void report_breakpoint_changes();
    /// Sends a `module` event (new, removed) for each file loaded or unloaded since the
    /// client was last told (dap_modules.cpp).
    void report_module_changes();
    /// After `initialize`.
    bool initialized() const { return initialized_; }
    void set_initialized() { initialized_ = true; }

    /// What the model's observer wrote (warnings of an evaluation) since the last command,
    /// as console output.
    void relay_model_output();

private:
    command_result run_in_focus(std::string_view line, stop_hint hint);
    void translate(const std::vector<nlohmann::json>& objects, stop_hint hint, command_result& r);
    void forget_ids();
    transport& client_;
    session_stream stream_;
    session session_;
    std::atomic<bool> resuming_{false};
    mutable std::mutex snapshot_lock_;
    nlohmann::json threads_snapshot_ = nlohmann::json::array();
    std::map<int, nlohmann::json> rank_threads_snapshot_;
    rank_sessions* ranks_ = nullptr;
    std::shared_ptr<rank_connection> requester_;
    bool announce_allowed_ = false;
    bool announced_ = false;
    std::atomic<bool> pause_pending_{false};
    std::atomic<bool> breakpoint_pause_{false};
    bool continue_after_requests_ = false;
    std::mutex resume_lock_;
    std::string resume_line_;
    std::vector<frame_ref> frames_;
    std::vector<variable_ref> variables_;
    origin origin_ = origin::none;
    bool stop_on_entry_ = false;
    bool terminated_sent_ = false;
    bool finished_ = false;
    std::map<std::string, std::vector<int>> breakpoint_sets_;
    std::map<std::string, nlohmann::json> breakpoint_requests_;
    std::map<int, bool> told_verified_;
    std::set<std::string> told_modules_;
    bool initialized_ = false;
};

/// A request's use of the model without a CLI command, for its duration: the processes'
/// memory is read afresh (as before each CLI command: the target may have run or been
/// written since), and what the model reports meanwhile reaches the console at the end.
class model_access {
public:
    explicit model_access(adapter& a);
    ~model_access();
    model_access(const model_access&) = delete;
    model_access& operator=(const model_access&) = delete;
    session& model() { return a_.model(); }

private:
    adapter& a_;
};

}  // namespace ompdbg::app::dap
