#pragma once
/// A cooperative fiber on the calling thread (ucontext). ptrace answers only the thread that
/// attached a process, so ranks that step together cannot run on threads: each rank runs
/// its (synchronous) step code as a fiber of the one tracer thread and yields where it
/// would wait for its process (mpi_step.hpp).

#include <ucontext.h>

#include <cstddef>
#include <functional>

namespace ompdbg::debugger {

class fiber {
public:
    /// `body` runs on a stack of its own (`stack_size` bytes, reserved, not committed) from
    /// the first resume(). An exception escaping `body` is logged and dropped: bodies
    /// catch their own. Throws when the stack cannot be mapped.
    explicit fiber(std::function<void()> body, std::size_t stack_size = std::size_t{8} << 20);
    /// Unmaps the stack. A fiber destroyed while suspended never unwinds its frames: run
    /// every fiber to its end.
    ~fiber();
    fiber(const fiber&) = delete;
    fiber& operator=(const fiber&) = delete;

    /// Runs the fiber until it yields or `body` returns. Not from inside a fiber; no-op
    /// once done.
    void resume();
    /// From inside the running fiber: back to the resume() that started this turn. Not
    /// from inside a catch block (the C++ runtime keeps one list of caught exceptions per
    /// thread).
    static void yield();
    /// The fiber running now, or nullptr on the thread's own stack.
    static fiber* current();
    bool done() const { return done_; }

private:
    static void entry();

    std::function<void()> body_;
    void* stack_ = nullptr;
    std::size_t map_size_ = 0;
    ucontext_t context_{};
    ucontext_t caller_{};
    bool started_ = false;
    bool done_ = false;
};

}  // namespace ompdbg::debugger
