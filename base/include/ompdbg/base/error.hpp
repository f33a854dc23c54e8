#pragma once
/// The project's one error type (sdb's sdb::error). Libraries throw it for what a user or a
/// target can cause; apps/ catches it and prints what() as one line.

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ompdbg {

class error : public std::runtime_error {
public:
    /// Throws an error whose message is `what`.
    [[noreturn]] static void send(const std::string& what) { throw error(what); }

    /// Throws "<prefix>: <strerror(errno)>"; call right after the failing system call.
    [[noreturn]] static void send_errno(const std::string& prefix) {
        throw error(prefix + ": " + std::strerror(errno));
    }

    /// Like send_errno but with an explicit errno value (for values carried over a pipe).
    [[noreturn]] static void send_errno(const std::string& prefix, int err) {
        throw error(prefix + ": " + std::strerror(err));
    }

private:
    explicit error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ompdbg
