#include "dap/dap_ranks.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "dap/dap_protocol.hpp"

namespace ompdbg::app::dap {

owned_fd& owned_fd::operator=(owned_fd&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = o.release();
    }
    return *this;
}

owned_fd::~owned_fd() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

namespace {

/// Where the socket's private directory goes: $XDG_RUNTIME_DIR (the user's own), else $TMPDIR, else /tmp.
std::string runtime_directory() {
    for (const char* name : {"XDG_RUNTIME_DIR", "TMPDIR"}) {
        const char* dir = std::getenv(name);
        if (dir != nullptr && *dir != '\0' && std::filesystem::is_directory(dir)) {
            return dir;
        }
    }
    return "/tmp";
}

}  // namespace

void rank_sessions::close() {
    stopping_ = true;
    if (acceptor_.joinable()) {
        acceptor_.join();
    }
    std::vector<std::shared_ptr<rank_connection>> list;
    {
        std::lock_guard lock(lock_);
        list = connections_;
        for (auto& c : list) {
            if (c->rank_ >= 0 && !c->terminated_sent_) {
                c->terminated_sent_ = true;
                c->client_.send(make_event("terminated"));
            }
        }
    }
    for (auto& c : list) {
        c->client_.stop();
        ::shutdown(c->fd_.get(), SHUT_RDWR);
        if (c->reader_.joinable()) {
            c->reader_.join();
        }
    }
    {
        std::lock_guard lock(lock_);
        connections_.clear();
    }
    listening_ = false;
    if (!socket_path_.empty()) {
        ::unlink(socket_path_.c_str());
        socket_path_.clear();
    }
    if (!directory_.empty()) {
        ::rmdir(directory_.c_str());
        directory_.clear();
    }
}

bool rank_sessions::announce(const std::map<int, pid_t>& ranks, std::string& message) {
    if (!supported_ || listening_ || ranks.empty()) {
        return false;
    }
    // A directory only the user can enter, the socket only the user can open: another user
    // cannot reach the ranks this server holds under ptrace.
    std::string pattern = runtime_directory() + "/ompdbg-dap-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        message = fmt::format("cannot make a directory for the rank sessions in {}: {}", runtime_directory(), std::strerror(errno));
        return false;
    }
    directory_ = pattern;
    std::string path = directory_ + "/ranks";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
        message = "the rank sessions' socket path is too long: " + path;
        return false;
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    owned_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0 || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::chmod(path.c_str(), 0600) != 0 || ::listen(fd.get(), 16) != 0) {
        message = fmt::format("cannot listen for the rank sessions on {}: {}", path, std::strerror(errno));
        if (fd.get() >= 0) {
            ::unlink(path.c_str());
        }
        return false;
    }
    socket_path_ = path;
    listener_ = std::move(fd);
    {
        std::lock_guard lock(lock_);
        ranks_ = ranks;
    }
    listening_ = true;
    acceptor_ = std::thread([this] { accept_loop(); });
    for (const auto& [rank, pid] : ranks) {
        nlohmann::json configuration{{"name", fmt::format("rank {}", rank)},
                                     {"request", "attach"},
                                     {"rank", rank},
                                     {"pid", pid},
                                     {"ompdbgParent", socket_path_}};
        if (!type_.empty()) {
            configuration["type"] = type_;
        }
        primary_.send({{"type", "request"},
                       {"command", "startDebugging"},
                       {"arguments", {{"request", "attach"}, {"configuration", configuration}}}});
    }
    return true;
}

// Connections come from the child adapters the client starts; one of another user (the
// socket's mode should keep them out) is closed at once.
void rank_sessions::accept_loop() {
    while (!stopping_) {
        pollfd p{listener_.get(), POLLIN, 0};
        // A bounded wait, so that the destructor's stop is noticed.
        int r = ::poll(&p, 1, 200);
        if (r <= 0) {
            continue;
        }
        owned_fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (fd.get() < 0) {
            continue;
        }
        ucred peer{};
        socklen_t size = sizeof peer;
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != ::getuid()) {
            continue;
        }
        auto c = std::make_shared<rank_connection>(std::move(fd));
        std::lock_guard lock(lock_);
        if (stopping_) {
            break;
        }
        connections_.push_back(c);
        c->reader_ = std::thread([this, c] { serve_(c); });
    }
}

bool rank_sessions::bind(rank_connection& c, const nlohmann::json& arguments, std::string& why) {
    auto it = arguments.find("rank");
    std::lock_guard lock(lock_);
    if (it == arguments.end() || !it->is_number_integer() || ranks_.count(it->get<int>()) == 0) {
        std::string known;
        for (const auto& [rank, pid] : ranks_) {
            known += (known.empty() ? "" : ", ") + std::to_string(rank);
        }
        why = fmt::format("attach to a rank needs \"rank\": one of the job's ranks ({})", known);
        return false;
    }
    c.rank_ = it->get<int>();
    c.configured_ = false;
    c.terminated_sent_ = false;
    return true;
}

nlohmann::json rank_sessions::stop_for(int rank) const {
    const auto& [stopped_rank, body] = *last_stop_;
    if (stopped_rank == rank) {
        return body;
    }
    nlohmann::json own = body;
    own["reason"] = "pause";
    own["threadId"] = ranks_.count(rank) != 0 ? ranks_.at(rank) : 0;
    own["preserveFocusHint"] = true;
    own["description"] = stopped_rank >= 0 ? fmt::format("The job stopped (rank {}: {})", stopped_rank,
                                                          body.value("description", std::string("stopped")))
                                           : "The job stopped";
    own.erase("hitBreakpointIds");
    own.erase("text");
    return own;
}

void rank_sessions::send_stop(rank_connection& c) {
    if (last_stop_ && c.configured_ && !c.terminated_sent_ && c.rank_ >= 0) {
        c.client_.send(make_event("stopped", stop_for(c.rank_)));
    }
}

void rank_sessions::configured(rank_connection& c, const std::function<void()>& respond) {
    std::lock_guard lock(lock_);
    // Configured before the answer leaves: the client may make the job run as soon as it
    // has it (the parent's configurationDone), and that `continued` must reach this session.
    c.configured_ = true;
    respond();
    send_stop(c);
}

void rank_sessions::closed(rank_connection& c) {
    std::lock_guard lock(lock_);
    c.rank_ = -1;
    c.terminated_sent_ = true;
}

void rank_sessions::terminate(rank_connection& c) {
    std::lock_guard lock(lock_);
    if (c.rank_ >= 0 && !c.terminated_sent_) {
        c.terminated_sent_ = true;
        c.client_.send(make_event("terminated"));
    }
}

void rank_sessions::stopped(int rank, const nlohmann::json& body) {
    std::lock_guard lock(lock_);
    last_stop_ = std::make_pair(rank, body);
    for (auto& c : connections_) {
        send_stop(*c);
    }
}

void rank_sessions::resumed(const rank_connection* by, pid_t tid) {
    std::lock_guard lock(lock_);
    last_stop_.reset();
    nlohmann::json event = make_event("continued", {{"threadId", tid}, {"allThreadsContinued", true}});
    if (by != nullptr) {
        primary_.send(event);
    }
    for (auto& c : connections_) {
        if (c.get() != by && c->rank_ >= 0 && c->configured_ && !c->terminated_sent_) {
            c->client_.send(event);
        }
    }
}

void rank_sessions::send_to_rank(int rank, const nlohmann::json& event) {
    std::lock_guard lock(lock_);
    for (auto& c : connections_) {
        if (c->rank_ == rank && !c->terminated_sent_) {
            c->client_.send(event);
        }
    }
}

void rank_sessions::send_to_all(const nlohmann::json& event) {
    std::lock_guard lock(lock_);
    bool ends = event.value("event", std::string()) == "terminated";
    for (auto& c : connections_) {
        if (c->rank_ >= 0 && !c->terminated_sent_) {
            c->client_.send(event);
            c->terminated_sent_ = ends;
        }
    }
    if (ends) {
        last_stop_.reset();
    }
}

}  // namespace ompdbg::app::dap
