#include "ompdbg/debugger/session/session.hpp"

#include "ompdbg/debugger/stack/inline_frames.hpp"
#include "ompdbg/debugger/stack/stack.hpp"

#include <algorithm>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::debugger {

namespace {

// The observer of a session whose front end has set none: every event is dropped.
session_observer& silent_observer() {
    static session_observer none;
    return none;
}

// gdb looks a bare program name up in the current directory first, then in PATH.
std::filesystem::path find_program(const std::filesystem::path& path) {
    std::filesystem::path p = path;
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
    return p.lexically_normal();
}

}  // namespace

void inferior::forget_process() {
    model_state.clear();
    stacks.clear();
    thread_db.reset();
    thread_db_tried = false;
    pending_hits.clear();
    planted.clear();
    process.reset();
}

inferior::~inferior() {
    forget_process();
}

session::session() : observer_(&silent_observer()) {
    inferiors_.push_back(std::make_unique<inferior>());
    focus_ = {0};
}

session::~session() {
    end_target();
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

void session::set_program(const std::filesystem::path& path, std::vector<std::string> args) {
    std::filesystem::path p = find_program(path);
    auto elf = elf_for(p);   // throws for a missing or non-ELF file
    if (program_ != p) {
        executable_bias_.reset();
    }
    program_ = p;
    args_ = std::move(args);
    settings_.args_text.clear();
    settings_.redirections = {};   // the words below are the program's, none redirects
    for (const auto& a : args_) {
        // gdb's --args quoting: words with blanks or quotes are escaped for the shell.
        std::string word;
        for (char c : a) {
            if (c == ' ' || c == '\t' || c == '\'' || c == '"' || c == '\\' || c == '<' || c == '>') {
                word += '\\';
            }
            word += c;
        }
        settings_.args_text += (settings_.args_text.empty() ? "" : " ") + word;
    }
    observer_->symbols_read(p, elf->has_debug_info());
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
    // The program's process (launched or attached): where it has the program is where the
    // program stays once it is gone.
    if (auto* proc = process(); proc && program_) {
        try {
            for (const auto& m : proc->modules()) {
                if (m.is_executable) {
                    executable_bias_ = m.load_bias;
                }
            }
        } catch (const std::exception&) {
        }
    }
}

tracer::loaded_module session::static_executable() {
    tracer::loaded_module m;
    if (!program_) {
        return m;
    }
    m.path = *program_;
    m.is_executable = true;
    m.load_bias = executable_bias_.value_or(0);
    try {
        m.elf = elf_for(*program_);
    } catch (const std::exception&) {
        m.elf.reset();
    }
    return m;
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

void session::switch_to(const inferior& inf) {
    auto it = std::find_if(inferiors_.begin(), inferiors_.end(), [&](const auto& p) { return p.get() == &inf; });
    switch_to(it == inferiors_.end() ? 0 : static_cast<std::size_t>(it - inferiors_.begin()));
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

void session::set_job(std::unique_ptr<mpi_job_base> j) {
    job_ = std::move(j);
}

void session::drop_process() {
    auto& inf = current_inferior();
    if ((inf.rank >= 0 && job_) || (inferiors_.size() > 1 && job_ == nullptr)) {
        // One rank of a job ended: it stays listed (mpi ranks), without a process, and the
        // job (its starter) stays too, even when it was the only rank. One of the
        // inferiors of a fork too (info inferiors).
        inf.forget_process();
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

// One reader per file, keyed by its canonical path (a library named through a symlink and
// by its real name is read once). An absolute path asked before is also a key of its own:
// the modules of every stop and solib event ask for the same paths again, and each
// weakly_canonical is a readlink and a stat per component. A relative path is resolved
// again each time (`cd` may have changed what it names).
std::shared_ptr<dwarf::elf_file> session::elf_for(const std::filesystem::path& path) {
    const bool absolute = path.is_absolute();
    if (absolute) {
        if (auto it = elves_.find(path.string()); it != elves_.end()) {
            return it->second;
        }
    }
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(path, ec);
    std::string key = ec ? path.string() : canonical.string();
    std::shared_ptr<dwarf::elf_file> elf;
    if (auto it = elves_.find(key); it != elves_.end()) {
        elf = it->second;
    } else {
        elf = dwarf::elf_file::open(path);
        elves_[key] = elf;
    }
    if (absolute) {
        elves_.emplace(path.string(), elf);
    }
    return elf;
}

tracer::elf_provider session::elf_provider() {
    return [this](const std::filesystem::path& path) { return elf_for(path); };
}

const std::vector<stack_frame>& session::stack(pid_t tid) {
    auto& whole = current_inferior().stacks.whole;
    if (auto it = whole.find(tid); it != whole.end()) {
        return it->second;
    }
    auto [it, inserted] = whole.emplace(tid, build_stack(*this, tid));
    return it->second;
}

const std::vector<stack_frame>& session::innermost_frames(pid_t tid, std::size_t count) {
    auto& cache = current_inferior().stacks;
    if (auto it = cache.whole.find(tid); it != cache.whole.end()) {
        return it->second;
    }
    auto it = cache.innermost.find(tid);
    if (it == cache.innermost.end()) {
        it = cache.innermost.emplace(tid, stack_cache::prefix{count, build_stack(*this, tid, count)}).first;
    }
    const auto& [asked, frames] = it->second;
    // A prefix shorter than asked now, and not because the stack ends: the whole stack.
    // The prefix stays as it is: frame contexts may point into it.
    if (frames.size() < count && frames.size() >= asked) {
        return stack(tid);
    }
    return frames;
}

void session::on_resume() {
    current_inferior().stacks.clear();
    forget_hidden_inline_frames(*this);
    current_inferior().selected_frame = 0;
}

void session::select_thread(pid_t tid) {
    current_inferior().selected_tid = tid;
    current_inferior().selected_frame = 0;
}

void session::select_frame(int level) {
    current_inferior().selected_frame = level;
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

}  // namespace ompdbg::debugger
