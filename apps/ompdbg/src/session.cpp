#include "session.hpp"
#include "command_args.hpp"
#include "inline_frames.hpp"

#include "commands_compare.hpp"
#include "commands_inferiors.hpp"
#include "commands_mpi.hpp"
#include "commands_mpi2dd.hpp"
#include "commands_dmpl.hpp"
#include "commands_mpi_queues.hpp"
#include "commands_omp.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::app {

namespace {

bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// gdb splits a command word at the first character that cannot be part of a name, so
// "p/x v" is `p` with "/x v" and "x/4xw &a" is `x` with "/4xw &a".
std::pair<std::string_view, std::string_view> split_word(std::string_view line) {
    line = trim(line);
    std::size_t n = 0;
    while (n < line.size() && is_word_char(line[n])) {
        ++n;
    }
    if (n == 0 && !line.empty()) {
        n = 1;   // "!" or "|" style one-character commands
    }
    return {line.substr(0, n), trim(line.substr(n))};
}

}  // namespace

inferior::~inferior() {
    // Caches that refer to the process go first; the process' destructor kills a launched
    // process and detaches an attached one.
    model_state.clear();
    stacks.clear();
    thread_db.reset();
    process.reset();
}

session::session(bool json, bool batch, std::FILE* out, std::FILE* err) : out_(json, out, err), batch_(batch) {
    inferiors_.push_back(std::make_unique<inferior>());
    focus_ = {0};
    register_control_commands(commands_);
    register_breakpoint_commands(commands_);
    register_thread_commands(commands_);
    register_stack_commands(commands_);
    register_data_commands(commands_);
    register_info_line_command(commands_);
    register_symbol_commands(commands_);
    register_misc_commands(commands_);
    register_prompt_commands(commands_);
    register_settings_commands(commands_);
    register_watch_commands(commands_);
    register_dump_commands(commands_);
    register_omp_commands(commands_);
    register_mpi_commands(commands_);
    register_mpi_queue_commands(commands_);
    register_mpi2dd_commands(commands_);
    register_compare_commands(commands_);   // adds to omp, thread, mpi and rank
    register_core_commands(commands_);
    register_signal_commands(commands_);
    register_inferior_commands(commands_);
    register_remote_commands(commands_);
    register_script_commands(commands_);
    register_shell_commands(commands_);
    register_dmpl_commands(commands_);  // wraps bt, info locals and omp commands: last
}

void session::allow_plugin_directory(const std::string& dir) {
    if (dir.empty()) {
        error::send("Argument required (directory to allow plugins from).");
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        error::send(dir + ": No such directory.");
    }
    plugin_policy_.allow_directory(dir);
}

session::~session() {
    end_target();
}

void session::set_program(const std::filesystem::path& path, std::vector<std::string> args) {
    std::filesystem::path p = path;
    // A bare name is looked up in the current directory first, then PATH, as gdb does.
    if (p.is_relative()) {
        std::error_code ec;
        if (!std::filesystem::exists(p, ec) && p.string().find('/') == std::string::npos) {
            if (const char* env = std::getenv("PATH")) {
                std::string_view rest(env);
                while (!rest.empty()) {
                    auto colon = rest.find(':');
                    auto dir = rest.substr(0, colon);
                    auto candidate = std::filesystem::path(std::string(dir)) / p;
                    if (::access(candidate.c_str(), X_OK) == 0) {
                        p = candidate;
                        break;
                    }
                    if (colon == std::string_view::npos) {
                        break;
                    }
                    rest.remove_prefix(colon + 1);
                }
            }
        }
        p = std::filesystem::absolute(p, ec);
    }
    p = p.lexically_normal();
    auto elf = elf_for(p);   // throws for a missing or non-ELF file
    program_ = p;
    args_ = std::move(args);
    settings_.args_text.clear();
    for (const auto& a : args_) {
        // gdb's --args quoting: words with blanks or quotes are escaped for the shell.
        std::string word;
        for (char c : a) {
            if (c == ' ' || c == '\t' || c == '\'' || c == '"' || c == '\\') {
                word += '\\';
            }
            word += c;
        }
        settings_.args_text += (settings_.args_text.empty() ? "" : " ") + word;
    }
    if (!batch_) {
        out_.line(fmt::format("Reading symbols from {}...", p.string()));
    }
    if (!elf->has_debug_info()) {
        out_.line(fmt::format("(No debugging symbols found in {})", p.string()));
    }
}

tracer::target* session::target() {
    auto* p = process();
    if (p && p->is_alive()) {
        return p;
    }
    return core_ ? static_cast<tracer::target*>(core_.get()) : p;
}

void session::set_core(std::unique_ptr<tracer::core_file> c) {
    auto& inf = current_inferior();
    inf.stacks.clear();
    inf.thread_numbers.clear();
    inf.last_thread_number = 0;
    inf.thread_db.reset();
    inf.thread_db_tried = false;
    inf.saw_multiple_threads = false;
    core_ = std::move(c);
    inf.selected_frame = 0;
    inf.selected_tid = 0;
    if (core_) {
        refresh_thread_numbers();
        inf.selected_tid = core_->threads().front()->tid();
    }
}

tracer::process& session::require_process() {
    auto* p = process();
    if (!p || !p->is_alive()) {
        if (current_inferior().rank >= 0) {
            error::send(fmt::format("Rank {} is not running.", current_inferior().rank));
        }
        error::send("The program is not being run.");
    }
    return *p;
}

std::unique_ptr<tracer::process> session::attach_process(pid_t pid) {
    if (remote_) {
        return tracer::remote_process::attach(remote_, pid, elf_provider());
    }
    return tracer::process::attach(pid, elf_provider());
}

void session::set_process(std::unique_ptr<tracer::process> p) {
    std::vector<std::unique_ptr<inferior>> list;
    auto inf = std::make_unique<inferior>();
    inf->process = std::move(p);
    list.push_back(std::move(inf));
    set_inferiors(std::move(list));
}

void session::set_inferiors(std::vector<std::unique_ptr<inferior>> list) {
    if (list.empty()) {
        list.push_back(std::make_unique<inferior>());
    }
    inferiors_ = std::move(list);
    focus_.clear();
    for (std::size_t i = 0; i < inferiors_.size(); ++i) {
        focus_.push_back(i);
        auto& inf = *inferiors_[i];
        if (inf.process) {
            inf.pid = inf.process->pid();
            inf.selected_tid = inf.process->pid();
            current_ = i;
            refresh_thread_numbers();
        }
    }
    current_ = 0;
}

void session::switch_to(std::size_t index) {
    if (index < inferiors_.size()) {
        current_ = index;
    }
}

inferior* session::find_rank(int rank) {
    for (auto& inf : inferiors_) {
        if (inf->rank == rank) {
            return inf.get();
        }
    }
    return nullptr;
}

void session::set_job(std::unique_ptr<mpi_job> j) {
    job_ = std::move(j);
}

void session::drop_process() {
    auto& inf = current_inferior();
    if ((inf.rank >= 0 && job_) || (inferiors_.size() > 1 && job_ == nullptr)) {
        // One rank of a job ended: it stays listed (mpi ranks), without a process, and the
        // job (its starter) stays too, even when it was the only rank. One of the
        // inferiors of a fork too (info inferiors).
        inf.model_state.clear();
        inf.stacks.clear();
        inf.thread_db.reset();
        inf.thread_db_tried = false;
        inf.pending_hits.clear();
        inf.planted.clear();
        inf.process.reset();
        return;
    }
    job_.reset();
    inferiors_.clear();
    inferiors_.push_back(std::make_unique<inferior>());
    current_ = 0;
    focus_ = {0};
}

void session::end_target() {
    // Ranks first (their starter would otherwise kill or orphan them), then the starter.
    bool launched_job = job_ && job_->launched();
    for (auto& inf : inferiors_) {
        auto* p = inf->process.get();
        if (!p) {
            continue;
        }
        try {
            if (p->is_alive()) {
                if (p->is_attached() && !launched_job) {
                    p->detach();
                } else {
                    p->kill();
                }
            }
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "ending the target: {}", e.what());
        }
    }
    job_.reset();
    inferiors_.clear();
    inferiors_.push_back(std::make_unique<inferior>());
    current_ = 0;
    focus_ = {0};
}

std::shared_ptr<dwarf::elf_file> session::elf_for(const std::filesystem::path& path) {
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(path, ec);
    std::string key = ec ? path.string() : canonical.string();
    if (auto it = elves_.find(key); it != elves_.end()) {
        return it->second;
    }
    std::shared_ptr<dwarf::elf_file> elf = dwarf::elf_file::open(path);
    elves_[key] = elf;
    return elf;
}

tracer::elf_provider session::elf_provider() {
    return [this](const std::filesystem::path& path) { return elf_for(path); };
}

void session::select_thread(pid_t tid) {
    current_inferior().selected_tid = tid;
    current_inferior().selected_frame = 0;
}

void session::select_frame(int level) {
    current_inferior().selected_frame = level;
}

const std::vector<stack_frame>& session::stack(pid_t tid) {
    auto& stacks_ = current_inferior().stacks;
    if (auto it = stacks_.find(tid); it != stacks_.end()) {
        return it->second;
    }
    auto [it, inserted] = stacks_.emplace(tid, build_stack(*this, tid));
    return it->second;
}

void session::refresh_thread_numbers() {
    auto& inf = current_inferior();
    tracer::target* tgt = target();
    if (!tgt || (tgt->is_live() && !process()->is_alive())) {
        return;
    }
    auto threads = tgt->threads();
    for (auto* t : threads) {
        if (!inf.thread_numbers.count(t->tid())) {
            inf.thread_numbers[t->tid()] = ++inf.last_thread_number;
        }
    }
    if (threads.size() > 1) {
        inf.saw_multiple_threads = true;
    }
}

int session::thread_number(pid_t tid) const {
    const auto& thread_numbers_ = inferiors_[current_]->thread_numbers;
    if (auto it = thread_numbers_.find(tid); it != thread_numbers_.end()) {
        return it->second;
    }
    return 0;
}

std::optional<pid_t> session::tid_of_thread_number(int number) const {
    const auto& process_ = inferiors_[current_]->process;
    for (auto& [tid, n] : inferiors_[current_]->thread_numbers) {
        if (n == number) {
            auto* tgt = const_cast<session*>(this)->target();
            if (tgt && (!tgt->is_live() || process_->is_alive()) && tgt->find_thread(tid)) {
                return tid;
            }
        }
    }
    return std::nullopt;
}

tracer::thread_db* session::thread_db() {
    auto& inf = current_inferior();
    auto& thread_db_ = inf.thread_db;
    tracer::target* tgt = target();
    if (!tgt || (tgt->is_live() && !process()->is_alive())) {
        return nullptr;
    }
    if (!thread_db_ && !inf.thread_db_tried) {
        inf.thread_db_tried = true;
        try {
            std::string why;
            thread_db_ = tracer::thread_db::open(*tgt, &why);
            if (!thread_db_) {
                log::write(log::channel::cli, "thread_db: {}", why);
            }
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "thread_db: {}", e.what());
        }
    }
    return thread_db_.get();
}

std::string session::thread_target_id(pid_t tid) {
    if (auto* db = thread_db()) {
        try {
            if (auto self = db->pthread_self(tid)) {
                return fmt::format("Thread 0x{:x} (LWP {})", *self, tid);
            }
        } catch (const std::exception&) {
        }
        // thread_db not ready yet (before libpthread initialised): gdb says "process N".
    }
    auto* process_ = process();
    if (process_ && tid == process_->pid() && !multi_threaded()) {
        return fmt::format("process {}", tid);
    }
    return fmt::format("LWP {}", tid);
}

int session::record_value(dwarf::value v) {
    history_.push_back(std::move(v));
    return static_cast<int>(history_.size());
}

std::optional<dwarf::value> session::history(int index) const {
    // $ (0) is the last value, $N the N-th, negative indexes count back from the last.
    int n = static_cast<int>(history_.size());
    int i = index <= 0 ? n + index : index;
    if (i < 1 || i > n) {
        return std::nullopt;
    }
    return history_[i - 1];
}

void session::on_resume() {
    current_inferior().stacks.clear();
    forget_hidden_inline_frames(*this);
    current_inferior().selected_frame = 0;
}

bool session::execute(std::string_view line_in, bool propagate_errors) {
    std::string_view line = trim(line_in);
    if (line.empty()) {
        if (last_repeatable_.empty()) {
            return true;
        }
        std::string again = last_repeatable_;
        return execute(again, propagate_errors);
    }
    if (line.front() == '#') {
        return true;
    }
    out_.begin_command(line);
    for (auto& inf : inferiors_) {
        if (inf && inf->process) {
            inf->process->forget_cached_memory();
        }
    }
    bool ok = true;
    try {
        auto [word, args] = split_word(line);
        const command* cmd = commands_.find(word);
        if (!cmd) {
            error::send(fmt::format("Undefined command: \"{}\".  Try \"help\".", word));
        }
        std::string path = cmd->name;
        // Descend into prefix commands: "info breakpoints", "thread apply all bt".
        while (cmd->subcommands) {
            auto [sub_word, sub_args] = split_word(args);
            const command* sub = sub_word.empty() ? nullptr : cmd->subcommands->find(sub_word);
            if (!sub) {
                if (cmd->handler) {
                    break;
                }
                if (sub_word.empty()) {
                    std::string names;
                    for (auto& c : cmd->subcommands->all()) {
                        out_.line(fmt::format("{} {} -- {}", path, c.name, c.summary));
                    }
                    error::send(fmt::format("\"{}\" must be followed by the name of a subcommand.", path));
                }
                error::send(fmt::format("Undefined {} command: \"{}\".  Try \"help {}\".", path, sub_word, path));
            }
            cmd = sub;
            args = sub_args;
            path += " " + cmd->name;
        }
        // gdb repeats `list` and `x` without their arguments: Enter continues after the last
        // lines listed / the last address examined instead of showing the same again.
        if (!cmd->repeat_on_enter) {
            last_repeatable_.clear();
        } else if (path == "list" || path == "x") {
            last_repeatable_ = path;
        } else {
            last_repeatable_ = std::string(line);
        }
        if (!cmd->handler) {
            error::send(fmt::format("\"{}\" must be followed by the name of a subcommand.", path));
        }
        if (is_mpi_session(*this)) {
            std::string top(commands_.find(word)->name);
            if (!mpi_execute(*this, top, line.substr(word.size()), [&] { cmd->handler(*this, args); })) {
                error::send("The command failed in some ranks.");
            }
        } else {
            cmd->handler(*this, args);
        }
    } catch (const std::exception& e) {
        ok = false;
        last_repeatable_.clear();
        if (propagate_errors) {
            out_.end_command(false);
            throw;
        }
        std::string where = sources_.empty() ? std::string() : sources_.back()->where();
        out_.error(where.empty() ? std::string(e.what())
                                 : fmt::format("{}: Error in sourced command file:\n{}", where, e.what()));
    }
    out_.end_command(ok);
    out_.flush();
    return ok;
}

bool session::run_source(line_source& src, bool stop_on_error) {
    sources_.push_back(&src);
    bool all_ok = true;
    while (!quit_) {
        auto line = src.next_line("(ompdbg) ");
        if (!line) {
            break;
        }
        if (!execute(*line)) {
            all_ok = false;
            failed_.push_back(std::string(trim(*line)));
            if (stop_on_error) {
                break;
            }
        }
    }
    sources_.pop_back();
    return all_ok;
}

std::optional<std::string> session::read_body_line(std::string_view prompt) {
    if (sources_.empty()) {
        return std::nullopt;
    }
    return sources_.back()->next_line(prompt);
}

bool session::query(const std::string& question, bool default_no) {
    if (!settings_.confirm) {
        return !default_no;   // `set confirm off`: gdb asks nothing and takes the default
    }
    bool interactive = !sources_.empty() && sources_.back()->is_interactive() && !batch_;
    const std::string choices = default_no ? "(y or [n])" : "(y or n)";
    if (!interactive) {
        out_.line(question + choices + " [answered Y; input not from terminal]");
        return true;
    }
    while (true) {
        auto answer = read_body_line(question + choices + " ");
        if (!answer) {
            out_.line("EOF [answered Y; input not from terminal]");
            return true;
        }
        auto a = trim(*answer);
        if (a.empty()) {
            if (default_no) {
                return false;
            }
            continue;
        }
        if (a[0] == 'y' || a[0] == 'Y') {
            return true;
        }
        if (a[0] == 'n' || a[0] == 'N') {
            return false;
        }
        out_.line("Please answer y or n.");
    }
}

}  // namespace ompdbg::app
