#pragma once
// A minimal real ptrace launcher implementing tracer::target, used by the unwinder and
// thread_db tests until tracer::process is available to them: fork + PTRACE_TRACEME with
// ASLR off (as gdb), an int3 planted at a function found with `nm`, every thread traced
// (PTRACE_O_TRACECLONE), memory through process_vm_readv, modules from /proc/PID/maps.
// Every wait has a deadline; the destructor kills the process group.

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ompdbg/tracer/target.hpp"
#include "process_runner.hpp"

namespace ompdbg::test {

class test_thread final : public tracer::thread {
public:
    explicit test_thread(pid_t tid) : tid_(tid) {}
    pid_t tid() const override { return tid_; }
    std::string name() const override { return {}; }
    tracer::thread_state state() const override {
        return stopped_ ? tracer::thread_state::stopped : tracer::thread_state::running;
    }
    const tracer::registers& regs() override {
        if (!have_regs_) {
            user_regs_struct gp{};
            user_fpregs_struct fp{};
            if (ptrace(PTRACE_GETREGS, tid_, nullptr, &gp) < 0 ||
                ptrace(PTRACE_GETFPREGS, tid_, nullptr, &fp) < 0) {
                throw std::runtime_error("GETREGS failed for " + std::to_string(tid_));
            }
            regs_ = tracer::registers(gp, fp);
            have_regs_ = true;
        }
        return regs_;
    }
    void write_regs(const tracer::registers& r) override {
        if (ptrace(PTRACE_SETREGS, tid_, nullptr, &r.gp()) < 0) {
            throw std::runtime_error("SETREGS failed");
        }
        regs_ = r;
        have_regs_ = true;
    }
    void resume(int sig = 0) {
        have_regs_ = false;
        stopped_ = false;
        ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
    }
    bool stopped_ = true;
    bool at_breakpoint = false;

private:
    pid_t tid_;
    bool have_regs_ = false;
    tracer::registers regs_;
};

class test_process final : public tracer::target {
public:
    /// Starts `path args...` stopped at exec, with ASLR disabled.
    static std::unique_ptr<test_process> launch(const std::string& path,
                                                const std::vector<std::string>& args,
                                                const std::string& stdout_path = "/dev/null") {
        pid_t pid = fork();
        if (pid == 0) {
            setpgid(0, 0);
            int out = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(out, 1);
            ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
            personality(ADDR_NO_RANDOMIZE);
            std::vector<char*> argv{const_cast<char*>(path.c_str())};
            for (auto& a : args) {
                argv.push_back(const_cast<char*>(a.c_str()));
            }
            argv.push_back(nullptr);
            execv(path.c_str(), argv.data());
            _exit(127);
        }
        auto p = std::unique_ptr<test_process>(new test_process(pid, path));
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
            throw std::runtime_error("launch failed: " + path);
        }
        ptrace(PTRACE_SETOPTIONS, pid, nullptr,
               reinterpret_cast<void*>(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL));
        p->threads_.emplace(pid, std::make_unique<test_thread>(pid));
        p->order_.push_back(pid);
        return p;
    }

    ~test_process() override {
        ::kill(pid_, SIGKILL);
        while (waitpid(-1, nullptr, __WALL) > 0) {
        }
    }

    /// Plants an int3 at file address `file_addr` of the executable (e.g. where gdb put
    /// its breakpoint); returns the run-time address.
    std::uint64_t break_at(std::uint64_t file_addr) {
        bp_ = modules().front().to_runtime(file_addr).addr();
        errno = 0;
        long word = ptrace(PTRACE_PEEKDATA, pid_, reinterpret_cast<void*>(bp_), nullptr);
        saved_ = word;
        word = (word & ~0xffL) | 0xcc;
        ptrace(PTRACE_POKEDATA, pid_, reinterpret_cast<void*>(bp_), reinterpret_cast<void*>(word));
        return bp_;
    }

    /// Resumes every thread not held at the breakpoint and waits until `count` threads sit
    /// on it (they stay stopped, pc rewound to the breakpoint). Signals are passed on.
    void run_until_breakpoint(std::size_t count, std::chrono::seconds timeout = std::chrono::seconds(20)) {
        for (auto& [tid, t] : threads_) {
            if (t->stopped_ && !t->at_breakpoint) {
                t->resume(pending_[tid]);
                pending_[tid] = 0;
            }
        }
        modules_valid_ = false;
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (held() < count) {
            int status = 0;
            pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
            if (tid == 0) {
                if (std::chrono::steady_clock::now() > deadline) {
                    throw std::runtime_error("timeout waiting for the breakpoint");
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));   // poll, bounded
                continue;
            }
            if (tid < 0) {
                throw std::runtime_error("process vanished");
            }
            if (WIFEXITED(status) || WIFSIGNALED(status)) {
                if (tid == pid_) {
                    throw std::runtime_error("process exited before the breakpoint");
                }
                threads_.erase(tid);
                std::erase(order_, tid);
                continue;
            }
            auto& t = thread_for(tid);
            t.stopped_ = true;
            int sig = WSTOPSIG(status);
            if (sig == SIGTRAP && (status >> 16) == PTRACE_EVENT_CLONE) {
                unsigned long child = 0;
                ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &child);
                thread_for(static_cast<pid_t>(child));
                t.resume();
            } else if (sig == SIGTRAP) {
                auto r = t.regs();
                if (r.pc() - 1 == bp_) {
                    r.set_pc(bp_);
                    t.write_regs(r);
                    t.at_breakpoint = true;
                } else {
                    t.resume();
                }
            } else if (sig == SIGSTOP && !seen_.count(tid)) {
                seen_.insert(tid);   // the initial stop of a new clone
                t.resume();
            } else {
                t.resume(sig);
            }
        }
    }

    std::vector<pid_t> held_threads() const {
        std::vector<pid_t> v;
        for (pid_t tid : order_) {
            if (threads_.at(tid)->at_breakpoint) {
                v.push_back(tid);
            }
        }
        return v;
    }

    // target
    pid_t pid() const override { return pid_; }
    bool is_live() const override { return true; }
    std::filesystem::path executable() const override { return path_; }
    void read_memory(virt_addr addr, std::span<std::byte> out) override {
        if (try_read_memory(addr, out) != out.size()) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "Cannot access memory at address %#lx",
                          static_cast<unsigned long>(addr.addr()));
            throw std::runtime_error(buf);
        }
    }
    std::size_t try_read_memory(virt_addr addr, std::span<std::byte> out) override {
        std::size_t done = 0;
        while (done < out.size()) {
            iovec local{out.data() + done, out.size() - done};
            iovec remote{reinterpret_cast<void*>(addr.addr() + done), out.size() - done};
            ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
            if (n <= 0) {
                break;
            }
            done += static_cast<std::size_t>(n);
        }
        // The planted int3 is not part of the program's memory.
        if (bp_ && bp_ >= addr.addr() && bp_ < addr.addr() + done) {
            out[bp_ - addr.addr()] = static_cast<std::byte>(saved_ & 0xff);
        }
        return done;
    }
    void write_memory(virt_addr, std::span<const std::byte>) override {
        throw std::runtime_error("not supported by the test launcher");
    }
    std::vector<tracer::thread*> threads() override {
        std::vector<tracer::thread*> v;
        for (pid_t tid : order_) {
            v.push_back(threads_.at(tid).get());
        }
        return v;
    }
    tracer::thread* find_thread(pid_t tid) override {
        auto it = threads_.find(tid);
        return it == threads_.end() ? nullptr : it->second.get();
    }
    /// From /proc/PID/maps: every file mapped at offset 0 whose ELF header is readable;
    /// bias = mapping start - first PT_LOAD's page-aligned vaddr. Executable first.
    const std::vector<tracer::loaded_module>& modules() override {
        if (modules_valid_) {
            return modules_;
        }
        modules_valid_ = true;
        modules_.clear();
        std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
        std::string line;
        std::set<std::string> seen;
        while (std::getline(maps, line)) {
            std::istringstream l(line);
            std::string range, perms, offset, dev, inode, file;
            if (!(l >> range >> perms >> offset >> dev >> inode >> file) || file.empty() ||
                file[0] != '/' || std::stoull(offset, nullptr, 16) != 0 || seen.count(file)) {
                continue;
            }
            auto first_vaddr = first_load_vaddr(file);
            if (!first_vaddr) {
                continue;
            }
            seen.insert(file);
            tracer::loaded_module m;
            m.path = file;
            m.load_bias = std::stoull(range, nullptr, 16) - (*first_vaddr & ~0xfffULL);
            m.is_executable = std::filesystem::equivalent(file, path_);
            if (m.is_executable) {
                modules_.insert(modules_.begin(), m);
            } else {
                modules_.push_back(m);
            }
        }
        return modules_;
    }

private:
    test_process(pid_t pid, std::string path) : pid_(pid), path_(std::move(path)) {}

    static std::optional<std::uint64_t> first_load_vaddr(const std::string& file) {
        std::ifstream f(file, std::ios::binary);
        Elf64_Ehdr eh{};
        if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) ||
            std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
            return std::nullopt;
        }
        f.seekg(static_cast<std::streamoff>(eh.e_phoff));
        for (int i = 0; i < eh.e_phnum; ++i) {
            Elf64_Phdr ph{};
            if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) {
                return std::nullopt;
            }
            if (ph.p_type == PT_LOAD) {
                return ph.p_vaddr;
            }
        }
        return std::nullopt;
    }

    test_thread& thread_for(pid_t tid) {
        auto it = threads_.find(tid);
        if (it == threads_.end()) {
            it = threads_.emplace(tid, std::make_unique<test_thread>(tid)).first;
            order_.push_back(tid);
        }
        return *it->second;
    }

    std::size_t held() const {
        std::size_t n = 0;
        for (auto& [tid, t] : threads_) {
            n += t->at_breakpoint ? 1 : 0;
        }
        return n;
    }

    pid_t pid_;
    std::string path_;
    std::map<pid_t, std::unique_ptr<test_thread>> threads_;
    std::vector<pid_t> order_;
    std::map<pid_t, int> pending_;
    std::set<pid_t> seen_;
    std::vector<tracer::loaded_module> modules_;
    bool modules_valid_ = false;   // re-read after every resume (libraries may have loaded)
    std::uint64_t bp_ = 0;
    long saved_ = 0;
};

}  // namespace ompdbg::test
