#include "dap/dap_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ompdbg/base/error.hpp"

namespace ompdbg::app::dap {

session_stream::session_stream() {
    cookie_io_functions_t io{};
    io.write = &session_stream::write_cookie;
    file_ = ::fopencookie(this, "w", io);
    if (file_ == nullptr) {
        error::send_errno("fopencookie");
    }
    // Line buffered: each object is complete when written (output flushes anyway).
    std::setvbuf(file_, nullptr, _IOLBF, 0);
}

session_stream::~session_stream() {
    std::fclose(file_);
}

ssize_t session_stream::write_cookie(void* self, const char* data, std::size_t size) {
    auto* s = static_cast<session_stream*>(self);
    bool seen = false;
    {
        std::lock_guard lock(s->lock_);
        s->pending_.append(data, size);
        // The stream is line-buffered: an event's line comes in one write.
        seen = s->seen_ && !s->needle_.empty() && std::string_view(data, size).find(s->needle_) != std::string_view::npos;
    }
    if (seen) {
        s->seen_();
    }
    return static_cast<ssize_t>(size);
}

void session_stream::watch(std::string needle, std::function<void()> seen) {
    std::lock_guard lock(lock_);
    needle_ = std::move(needle);
    seen_ = std::move(seen);
}

std::vector<nlohmann::json> session_stream::take() {
    std::fflush(file_);
    std::lock_guard lock(lock_);
    std::vector<nlohmann::json> out;
    std::size_t start = 0, nl = 0;
    while ((nl = pending_.find('\n', start)) != std::string::npos) {
        std::string line = pending_.substr(start, nl - start);
        start = nl + 1;
        if (line.empty()) {
            continue;
        }
        try {
            out.push_back(nlohmann::json::parse(line));
        } catch (const nlohmann::json::exception&) {
            out.push_back(nlohmann::json{{"type", "text"}, {"text", line}});
        }
    }
    pending_.erase(0, start);
    return out;
}

stdio_redirect::stdio_redirect(std::function<void(std::string)> sink) : sink_(std::move(sink)) {
    proto_in_ = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
    proto_out_ = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    int fds[2];
    if (proto_in_ < 0 || proto_out_ < 0 || ::pipe2(fds, O_CLOEXEC) != 0) {
        error::send_errno("cannot set up the protocol's descriptors");
    }
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) {
        ::dup2(null, 0);
        ::close(null);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[1]);
    pipe_read_ = fds[0];
    thread_ = std::thread([this] { forward(); });
}

stdio_redirect::~stdio_redirect() {
    stop_ = true;
    thread_.join();
    ::close(pipe_read_);
}

void stdio_redirect::forward() {
    char buf[4096];
    for (;;) {
        pollfd p{pipe_read_, POLLIN, 0};
        int r = ::poll(&p, 1, 100);
        if (r < 0 && errno != EINTR) {
            return;
        }
        if (r <= 0) {
            if (stop_) {
                return;   // nothing more buffered: the writers are gone or quiet
            }
            continue;
        }
        ssize_t n = ::read(pipe_read_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        sink_(std::string(buf, static_cast<std::size_t>(n)));
    }
}

}  // namespace ompdbg::app::dap
