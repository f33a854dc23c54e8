#include "ompdbg/debugger/stack/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <exception>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::debugger {

namespace {

thread_local fiber* t_current = nullptr;
thread_local fiber* t_starting = nullptr;   // makecontext passes no pointer portably

}  // namespace

fiber::fiber(std::function<void()> body, std::size_t stack_size) : body_(std::move(body)) {
    auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    map_size_ = (stack_size + page - 1) / page * page + page;   // + a guard page below
    stack_ = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                    -1, 0);
    if (stack_ == MAP_FAILED) {
        stack_ = nullptr;
        error::send_errno("mmap of a fiber stack");
    }
    ::mprotect(stack_, page, PROT_NONE);   // an overflow faults instead of writing below
    if (::getcontext(&context_) != 0) {
        ::munmap(stack_, map_size_);
        error::send_errno("getcontext");
    }
    context_.uc_stack.ss_sp = stack_;
    context_.uc_stack.ss_size = map_size_;
    context_.uc_link = &caller_;   // the body's end returns to the last resume()
    ::makecontext(&context_, &fiber::entry, 0);
}

fiber::~fiber() {
    if (stack_) {
        ::munmap(stack_, map_size_);
    }
}

void fiber::entry() {
    fiber* self = t_starting;
    t_starting = nullptr;
    try {
        self->body_();
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "fiber body: {}", e.what());
    } catch (...) {
        log::write(log::channel::cli, "fiber body: unknown exception");
    }
    self->done_ = true;
    // Returning switches to uc_link: the caller_ of the last resume().
}

void fiber::resume() {
    if (done_ || t_current == this) {
        return;
    }
    fiber* previous = t_current;
    t_current = this;
    if (!started_) {
        started_ = true;
        t_starting = this;
    }
    ::swapcontext(&caller_, &context_);
    t_current = previous;
}

void fiber::yield() {
    fiber* self = t_current;
    if (!self) {
        return;
    }
    ::swapcontext(&self->context_, &self->caller_);
}

fiber* fiber::current() {
    return t_current;
}

}  // namespace ompdbg::debugger
