// The typed client of gdb's remote protocol (rsp_client.hpp): packets as functions, replies
// as values. Modelled on what gdb's remote.c and LLDB's GDBRemoteCommunicationClient send
// to gdbserver; the features come from one qSupported exchange at connect.
#include "ompdbg/tracer/rsp_client.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "internal/rsp_xml.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::tracer::rsp {

namespace {

// gdb's signal numbers (gdb/signals.def) for the host's signals 1..31; 0: none.
constexpr int gdb_of_host[32] = {0,  1,  2,  3,  4,  5,  6,  10, 8,  9,  30, 11, 31, 13, 14, 15,
                                 0,  20, 19, 17, 18, 21, 22, 16, 24, 25, 26, 27, 28, 23, 32, 12};

bool is_error(std::string_view r) {
    return r.size() >= 3 && r[0] == 'E' && std::isxdigit(static_cast<unsigned char>(r[1])) &&
           std::isxdigit(static_cast<unsigned char>(r[2]));
}

std::uint64_t parse_hex(std::string_view s, std::string_view what) {
    if (s.empty() || s.size() > 16) {
        error::send(fmt::format("Remote agent sent a malformed {}: \"{}\".", what, s));
    }
    std::uint64_t v = 0;
    for (char c : s) {
        int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                : (c >= 'a' && c <= 'f')                   ? c - 'a' + 10
                : (c >= 'A' && c <= 'F')                   ? c - 'A' + 10
                                                           : -1;
        if (d < 0) {
            error::send(fmt::format("Remote agent sent a malformed {}: \"{}\".", what, s));
        }
        v = v * 16 + static_cast<unsigned>(d);
    }
    return v;
}

std::uint64_t attr_hex(const internal::xml_attributes& a, const char* name) {
    auto it = a.find(name);
    if (it == a.end()) {
        return 0;
    }
    std::string_view v = it->second;
    if (v.starts_with("0x")) {
        v.remove_prefix(2);
    }
    return parse_hex(v, name);
}

// gdb's File-I/O errno values (gdbsupport/fileio.h) as this host's: the same numbers but
// for these.
int errno_from_gdb(std::uint64_t e) {
    switch (e) {
    case 88: return ENOSYS;
    case 91: return ENAMETOOLONG;
    case 9999: return EIO;   // FILEIO_EUNKNOWN
    default: return e > 0 && e < 4096 ? static_cast<int>(e) : EIO;
    }
}

/// A vFile: reply: `F<result>[,<errno>][;<attachment>]`, its result; the attachment (still
/// escaped) in `attachment`. Throws with the host's errno for result -1 ("PATH on the
/// remote host: No such file or directory"), and for an empty or malformed reply.
std::int64_t file_result(std::string_view r, std::string_view packet, std::string_view what,
                         std::string_view* attachment = nullptr) {
    if (r.empty()) {
        error::send(fmt::format("Remote agent does not support {}.", packet));
    }
    if (r[0] != 'F') {
        error::send(fmt::format("Remote agent sent a malformed {} reply: \"{}\".", packet, r.substr(0, 40)));
    }
    auto semi = r.find(';');
    std::string_view head = r.substr(1, semi == std::string_view::npos ? std::string_view::npos : semi - 1);
    if (attachment) {
        *attachment = semi == std::string_view::npos ? std::string_view{} : r.substr(semi + 1);
    }
    if (head.starts_with("-1")) {
        auto comma = head.find(',');
        int e = comma == std::string_view::npos ? EIO : errno_from_gdb(parse_hex(head.substr(comma + 1), "errno"));
        error::send(fmt::format("{} on the remote host: {}", what, std::strerror(e)));
    }
    return static_cast<std::int64_t>(parse_hex(head.substr(0, head.find(',')), packet));
}

}  // namespace

int signal_from_gdb(int g) {
    for (int h = 1; h < 32; ++h) {
        if (gdb_of_host[h] == g && g != 0) {
            return h;
        }
    }
    if (g == 45) {
        return 33;
    }
    if (g >= 46 && g <= 75) {
        return g - 46 + 34;   // GDB_SIGNAL_REALTIME_34 ..
    }
    return g == 0 ? 0 : SIGTRAP;
}

int signal_to_gdb(int h) {
    if (h > 0 && h < 32) {
        return gdb_of_host[h];
    }
    if (h == 33) {
        return 45;
    }
    if (h >= 34 && h <= 63) {
        return h - 34 + 46;
    }
    return 0;
}

std::pair<pid_t, pid_t> parse_thread_id(std::string_view id) {
    auto one = [](std::string_view s) -> pid_t {
        if (s == "-1") {
            return -1;
        }
        return static_cast<pid_t>(parse_hex(s, "thread id"));
    };
    if (id.starts_with("p")) {
        id.remove_prefix(1);
        auto dot = id.find('.');
        if (dot == std::string_view::npos) {
            return {one(id), -1};
        }
        return {one(id.substr(0, dot)), one(id.substr(dot + 1))};
    }
    return {0, one(id)};
}

stop_reply parse_stop_reply(std::string_view p) {
    if (p.size() < 3) {
        error::send(fmt::format("Remote agent sent a malformed stop reply: \"{}\".", p));
    }
    stop_reply r;
    char kind = p[0];
    // S/T carry two hex digits; gdbserver's multiprocess W and X as many as the value
    // needs ("W0;process:1c1c").
    std::size_t digits = 2;
    if (kind == 'W' || kind == 'X') {
        digits = std::min(p.find(';'), p.size()) - 1;
    }
    if (digits == 0 || digits > 8) {
        error::send(fmt::format("Remote agent sent a malformed stop reply: \"{}\".", p.substr(0, 40)));
    }
    int value = static_cast<int>(parse_hex(p.substr(1, digits), "stop reply"));
    std::string_view rest = p.substr(1 + digits);
    switch (kind) {
    case 'S':
    case 'T':
        r.what = stop_reply::kind::stopped;
        r.signo = signal_from_gdb(value);
        break;
    case 'W':
        r.what = stop_reply::kind::exited;
        r.exit_code = value;
        break;
    case 'X':
        r.what = stop_reply::kind::terminated;
        r.signo = signal_from_gdb(value);
        break;
    default:
        error::send(fmt::format("Remote agent sent a malformed stop reply: \"{}\".", p.substr(0, 40)));
    }
    if (!rest.empty() && rest[0] == ';') {
        rest.remove_prefix(1);   // W00;process:1f
    }
    while (!rest.empty()) {
        auto semi = rest.find(';');
        auto pair = rest.substr(0, semi);
        rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
        auto colon = pair.find(':');
        std::string name(pair.substr(0, colon));
        std::string val(colon == std::string_view::npos ? std::string_view{} : pair.substr(colon + 1));
        if (name == "thread") {
            auto [pid, tid] = parse_thread_id(val);
            r.pid = pid;
            r.tid = tid;
        } else if (name == "process") {
            r.pid = static_cast<pid_t>(parse_hex(val, "process id"));
        } else if (name == "swbreak") {
            r.swbreak = true;
        } else if (!name.empty()) {
            r.fields[name] = val;
        }
    }
    return r;
}

bool stop_reply::is_process_event() const {
    return what == kind::stopped && (fields.count("fork") > 0 || fields.count("vfork") > 0 ||
                                     fields.count("vforkdone") > 0 || fields.count("exec") > 0);
}

client::client(std::unique_ptr<packet_io> io, bool extended) : io_(std::move(io)), extended_(extended) {
    // xmlRegisters=i386: gdbserver on x86 describes its registers in XML only when asked.
    // fork-events+ and the others: the agent then reports forks, vforks and execs (gdb's
    // packet offers them too) instead of letting fork children go with our breakpoints in
    // their memory; the agent answers with those it supports.
    auto reply = io_->exchange("qSupported:multiprocess+;swbreak+;hwbreak+;fork-events+;vfork-events+;exec-events+;"
                               "vContSupported+;xmlRegisters=i386");
    if (reply.empty() || is_error(reply)) {
        error::send(fmt::format("Remote agent ({}) does not answer qSupported: \"{}\".", io_->link().describe(), reply));
    }
    std::string_view rest = reply;
    while (!rest.empty()) {
        auto semi = rest.find(';');
        auto item = rest.substr(0, semi);
        rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
        if (item.starts_with("PacketSize=")) {
            features_.packet_size = std::max<std::size_t>(64, parse_hex(item.substr(11), "PacketSize"));
        } else if (item == "multiprocess+") {
            features_.multiprocess = true;
        } else if (item == "QStartNoAckMode+") {
            features_.no_ack_mode = true;
        } else if (item == "qXfer:features:read+") {
            features_.xfer_features = true;
        } else if (item == "qXfer:threads:read+") {
            features_.xfer_threads = true;
        } else if (item == "qXfer:libraries-svr4:read+") {
            features_.xfer_libraries_svr4 = true;
        } else if (item == "qXfer:auxv:read+") {
            features_.xfer_auxv = true;
        } else if (item == "qXfer:exec-file:read+") {
            features_.xfer_exec_file = true;
        } else if (item == "binary-upload+") {
            features_.binary_upload = true;
        } else if (item == "swbreak+") {
            features_.swbreak = true;
        } else if (item == "vContSupported+") {
            features_.vcont = true;
        } else if (item == "QNonStop+") {
            features_.non_stop = true;
        } else if (item == "QCatchSyscalls+") {
            features_.catch_syscalls = true;
        } else if (item == "fork-events+") {
            features_.fork_events = true;
        } else if (item == "vfork-events+") {
            features_.vfork_events = true;
        } else if (item == "exec-events+") {
            features_.exec_events = true;
        }
    }
    if (features_.no_ack_mode) {
        if (io_->exchange("QStartNoAckMode") == "OK") {
            io_->set_no_ack(true);
        } else {
            features_.no_ack_mode = false;
        }
    }
    if (extended_) {
        expect_ok(io_->exchange("!"), "extended-remote mode");
    }
}

void client::expect_ok(std::string_view r, std::string_view what) {
    if (r == "OK") {
        return;
    }
    if (r.empty()) {
        error::send(fmt::format("Remote agent does not support {}.", what));
    }
    error::send(fmt::format("Remote agent refused {}: {}.", what, r.substr(0, 60)));
}

std::string client::thread_id(pid_t pid, pid_t tid) const {
    auto one = [](pid_t v) { return v < 0 ? std::string("-1") : fmt::format("{:x}", v); };
    if (features_.multiprocess) {
        return fmt::format("p{}.{}", one(pid), one(tid));
    }
    return one(tid);
}

void client::select_thread(pid_t pid, pid_t tid) {
    if (selected_ && selected_->first == pid && selected_->second == tid) {
        return;
    }
    auto r = io_->exchange("Hg" + thread_id(pid, tid));
    if (r != "OK") {
        error::send(fmt::format("Thread {}.{} is not known to the remote agent ({}).", pid, tid, r.substr(0, 20)));
    }
    selected_ = {pid, tid};
}

void client::catch_syscalls(pid_t pid, const std::optional<std::vector<int>>& numbers) {
    std::string packet = numbers ? "QCatchSyscalls:1" : "QCatchSyscalls:0";
    for (int n : numbers ? *numbers : std::vector<int>{}) {
        packet += fmt::format(";{:x}", n);
    }
    select_process(pid);
    auto r = io_->exchange(packet);
    if (r != "OK") {
        error::send(fmt::format("The remote agent refused to catch system calls ({}).",
                                r.empty() ? "QCatchSyscalls not supported" : r.substr(0, 20)));
    }
}

void client::select_process(pid_t pid) {
    // Memory, breakpoints and the process's objects: any thread of the process will do.
    if (!selected_ || selected_->first != pid) {
        select_thread(pid, pid);
    }
}

void client::set_non_stop() {
    if (!features_.non_stop) {
        error::send(fmt::format("Remote agent ({}) lacks non-stop mode (QNonStop), which ompdbg needs to stop one "
                                "process of a host while others run.",
                                io_->link().describe()));
    }
    expect_ok(io_->exchange("QNonStop:1"), "non-stop mode (QNonStop:1)");
    non_stop_ = true;
}

std::optional<stop_reply> client::attach(pid_t pid) {
    selected_.reset();
    auto r = io_->exchange(fmt::format("vAttach;{:x}", pid));
    if (r.empty()) {
        error::send("Remote agent does not support attaching (vAttach): use `target extended-remote`.");
    }
    if (is_error(r) || r[0] == 'E') {
        error::send(fmt::format("Cannot attach to process {} on the remote host: no such process or not permitted ({}).",
                                pid, r.substr(0, 20)));
    }
    if (non_stop_ && r == "OK") {
        return std::nullopt;
    }
    return parse_stop_reply(r);
}

stop_reply client::run(const std::vector<std::string>& argv) {
    selected_.reset();
    std::string packet = "vRun";
    for (const auto& a : argv) {
        packet += ';';
        packet += to_hex(a);
    }
    auto r = io_->exchange(packet);
    if (r.empty()) {
        error::send("Remote agent does not support running a program (vRun): use `target extended-remote` with "
                    "gdbserver --multi.");
    }
    if (is_error(r) || r[0] == 'E') {
        error::send(fmt::format("Running \"{}\" on the remote host failed ({}): no such program there, or not "
                                "executable.",
                                argv.empty() ? std::string() : argv.front(), r.substr(0, 20)));
    }
    return parse_stop_reply(r);
}

std::optional<bool> client::process_exists(pid_t pid) {
    auto r = io_->exchange("vFile:open:" + to_hex(fmt::format("/proc/{}/stat", pid)) + ",0,0");
    if (r.size() < 2 || r[0] != 'F') {
        return std::nullopt;   // no vFile: nothing known
    }
    if (r.starts_with("F-1")) {
        return false;
    }
    io_->exchange("vFile:close:" + r.substr(1, r.find(';') == std::string::npos ? std::string::npos : r.find(';') - 1));
    return true;
}

std::optional<stop_reply> client::query_stop() {
    auto r = io_->exchange("?");
    if (r.empty() || r == "OK") {
        return std::nullopt;
    }
    auto first = parse_stop_reply(r);
    if (non_stop_) {
        // Non-stop: `?` queues one stop per stopped thread; the first came as the reply.
        for (int n = 0; n < 100000 && next_stopped(); ++n) {
        }
    }
    return first;
}

void client::detach(pid_t pid) {
    selected_.reset();
    expect_ok(io_->exchange(features_.multiprocess ? fmt::format("D;{:x}", pid) : std::string("D")), "detach");
}

void client::kill(pid_t pid) {
    selected_.reset();
    if (features_.multiprocess) {
        expect_ok(io_->exchange(fmt::format("vKill;{:x}", pid)), "kill");
    } else {
        io_->send("k");
    }
}

std::string client::read_registers(pid_t pid, pid_t tid) {
    select_thread(pid, tid);
    std::string r = io_->exchange("g");
    if (r.empty() || is_error(r)) {
        error::send(fmt::format("Cannot read the registers of thread {}.{} ({}).", pid, tid, r.substr(0, 20)));
    }
    // "xx": a register the agent cannot read; zero here.
    std::replace(r.begin(), r.end(), 'x', '0');
    return from_hex(r);
}

void client::write_registers(pid_t pid, pid_t tid, std::string_view raw) {
    select_thread(pid, tid);
    expect_ok(io_->exchange("G" + to_hex(raw)), "writing registers");
}

const std::vector<register_desc>& client::registers() {
    if (registers_) {
        return *registers_;
    }
    if (!features_.xfer_features) {
        error::send("Remote agent has no target description (qXfer:features:read), which ompdbg needs.");
    }
    std::vector<register_desc> regs;
    int next = 0;
    std::vector<std::string> pending{"target.xml"};
    for (std::size_t i = 0; i < pending.size() && i < 64; ++i) {
        std::string doc = xfer("features", pending[i]);
        for (auto& a : internal::xml_elements(doc, "reg")) {
            register_desc d;
            d.name = a["name"];
            d.size = std::stoul(a.count("bitsize") ? a["bitsize"] : std::string("0")) / 8;
            d.regnum = a.count("regnum") ? std::stoi(a["regnum"]) : next;
            next = d.regnum + 1;
            regs.push_back(d);
        }
        for (auto& a : internal::xml_elements(doc, "xi:include")) {
            pending.insert(pending.begin() + static_cast<long>(i) + 1, a["href"]);
        }
    }
    std::stable_sort(regs.begin(), regs.end(), [](auto& a, auto& b) { return a.regnum < b.regnum; });
    std::size_t offset = 0;
    for (auto& r : regs) {
        r.offset = offset;
        offset += r.size;
    }
    registers_ = std::move(regs);
    return *registers_;
}

std::size_t client::read_memory(pid_t pid, std::uint64_t addr, std::span<std::byte> out) {
    select_process(pid);
    std::size_t chunk = std::max<std::size_t>(16, (features_.packet_size - 32) / 2);
    std::size_t done = 0;
    while (done < out.size()) {
        std::size_t n = std::min(chunk, out.size() - done);
        auto r = io_->exchange(fmt::format("m{:x},{:x}", addr + done, n));
        if (r.empty() || is_error(r)) {
            break;
        }
        auto bytes = from_hex(r);
        if (bytes.size() > n) {
            error::send("Remote agent sent more memory than asked for.");
        }
        std::memcpy(out.data() + done, bytes.data(), bytes.size());
        done += bytes.size();
        if (bytes.size() < n) {
            break;
        }
    }
    return done;
}

std::vector<std::vector<std::byte>> client::read_memory_ranges(
    pid_t pid, const std::vector<std::pair<std::uint64_t, std::size_t>>& ranges) {
    select_process(pid);
    std::size_t chunk = std::max<std::size_t>(16, (features_.packet_size - 32) / 2);
    std::vector<std::string> requests;
    for (auto [addr, size] : ranges) {
        requests.push_back(fmt::format("m{:x},{:x}", addr, std::min(size, chunk)));
    }
    auto replies = io_->exchange_all(requests);
    std::vector<std::vector<std::byte>> out(ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        if (replies[i].empty() || is_error(replies[i])) {
            continue;
        }
        auto bytes = from_hex(replies[i]);
        if (bytes.size() > ranges[i].second) {
            error::send("Remote agent sent more memory than asked for.");
        }
        out[i].resize(bytes.size());
        std::memcpy(out[i].data(), bytes.data(), bytes.size());
    }
    return out;
}

void client::write_memory(pid_t pid, std::uint64_t addr, std::span<const std::byte> data) {
    select_process(pid);
    std::size_t chunk = std::max<std::size_t>(16, (features_.packet_size - 64) / 2);
    for (std::size_t done = 0; done < data.size(); done += chunk) {
        std::size_t n = std::min(chunk, data.size() - done);
        std::string_view bytes(reinterpret_cast<const char*>(data.data()) + done, n);
        auto r = io_->exchange(fmt::format("M{:x},{:x}:{}", addr + done, n, to_hex(bytes)));
        if (r != "OK") {
            error::send(fmt::format("Cannot access memory at address {:#x}", addr + done));
        }
    }
}

void client::insert_breakpoint(pid_t pid, std::uint64_t addr) {
    select_process(pid);
    auto r = io_->exchange(fmt::format("Z0,{:x},1", addr));
    if (r != "OK") {
        error::send(fmt::format("Cannot insert breakpoint at {:#x} through the remote agent ({}).", addr,
                                r.empty() ? "not supported" : r.substr(0, 20)));
    }
}

void client::remove_breakpoint(pid_t pid, std::uint64_t addr) {
    select_process(pid);
    auto r = io_->exchange(fmt::format("z0,{:x},1", addr));
    if (r != "OK") {
        error::send(fmt::format("Cannot remove breakpoint at {:#x} through the remote agent ({}).", addr, r.substr(0, 20)));
    }
}

std::string client::insert_watchpoint(pid_t pid, int type, std::uint64_t addr, std::size_t len) {
    select_process(pid);
    return io_->exchange(fmt::format("Z{},{:x},{:x}", type, addr, len));
}

void client::remove_watchpoint(pid_t pid, int type, std::uint64_t addr, std::size_t len) {
    select_process(pid);
    auto r = io_->exchange(fmt::format("z{},{:x},{:x}", type, addr, len));
    if (r != "OK") {
        error::send(fmt::format("Cannot remove the watchpoint at {:#x} through the remote agent ({}).", addr,
                                r.empty() ? "not supported" : r.substr(0, 20)));
    }
}

void client::resume(const std::vector<resume_action>& actions) {
    std::string p = "vCont";
    for (auto& a : actions) {
        p += ';';
        p += a.signo ? static_cast<char>(std::toupper(a.op)) : a.op;
        if (a.signo) {
            p += fmt::format("{:02x}", signal_to_gdb(a.signo));
        }
        p += ':' + thread_id(a.pid, a.tid == 0 ? -1 : a.tid);
    }
    selected_.reset();
    if (non_stop_) {
        auto r = io_->exchange(p);
        if (r != "OK") {
            error::send(fmt::format("Remote agent refused to resume ({}): {}.", p.substr(0, 40),
                                    r.empty() ? std::string("vCont not supported") : r.substr(0, 20)));
        }
        return;
    }
    io_->send(p);
}

void client::stop(pid_t pid) {
    expect_ok(io_->exchange("vCont;t:" + thread_id(pid, -1)), fmt::format("stopping process {}", pid));
}

std::optional<stop_reply> client::next_notification(int timeout_ms) {
    for (;;) {
        auto n = io_->try_notification(timeout_ms);
        if (!n) {
            return std::nullopt;
        }
        if (n->starts_with("Stop:")) {
            return parse_stop_reply(std::string_view(*n).substr(5));
        }
        timeout_ms = 0;   // another kind of notification: none other is asked for
    }
}

std::optional<stop_reply> client::next_stopped() {
    auto r = io_->exchange("vStopped");
    if (r == "OK") {
        return std::nullopt;
    }
    if (r.empty() || is_error(r)) {
        error::send(fmt::format("Remote agent failed vStopped: \"{}\".", r.substr(0, 20)));
    }
    return parse_stop_reply(r);
}

std::optional<stop_reply> client::wait_stop(int timeout_ms) {
    for (;;) {
        auto r = io_->try_receive(timeout_ms);
        if (!r) {
            return std::nullopt;
        }
        if (r->size() > 1 && (*r)[0] == 'O' && *r != "OK") {
            continue;   // console output of the agent
        }
        if (is_error(*r)) {
            error::send(fmt::format("Remote agent failed to resume the target: {}.", *r));
        }
        return parse_stop_reply(*r);
    }
}

std::string client::xfer(std::string_view object, std::string_view annex) {
    std::string out;
    std::size_t len = std::max<std::size_t>(64, features_.packet_size - 32);
    for (int round = 0; round < 100000; ++round) {
        auto r = io_->exchange(fmt::format("qXfer:{}:read:{}:{:x},{:x}", object, annex, out.size(), len));
        if (r.empty()) {
            error::send(fmt::format("Remote agent does not support qXfer:{}:read.", object));
        }
        if (r[0] == 'E') {
            error::send(fmt::format("Remote agent cannot read {} {} ({}).", object, annex, r.substr(0, 20)));
        }
        if (r[0] != 'm' && r[0] != 'l') {
            error::send(fmt::format("Remote agent sent a malformed qXfer reply: \"{}\".", r.substr(0, 40)));
        }
        auto data = unescape_binary(std::string_view(r).substr(1));
        out += data;
        if (r[0] == 'l' || data.empty()) {
            return out;
        }
    }
    error::send(fmt::format("Remote agent sent an endless {} object.", object));
}

std::vector<thread_entry> client::threads() {
    std::vector<thread_entry> out;
    for (auto& a : internal::xml_elements(xfer("threads", ""), "thread")) {
        thread_entry t;
        auto [pid, tid] = parse_thread_id(a["id"]);
        t.pid = pid;
        t.tid = tid;
        t.name = a["name"];
        out.push_back(t);
    }
    return out;
}

std::vector<library_entry> client::libraries(pid_t pid, std::uint64_t* main_lm) {
    select_process(pid);
    auto doc = xfer("libraries-svr4", "");
    if (main_lm) {
        auto lists = internal::xml_elements(doc, "library-list-svr4");
        *main_lm = lists.empty() ? 0 : attr_hex(lists.front(), "main-lm");
    }
    std::vector<library_entry> out;
    for (auto& a : internal::xml_elements(doc, "library")) {
        out.push_back({a["name"], attr_hex(a, "lm"), attr_hex(a, "l_addr"), attr_hex(a, "l_ld")});
    }
    return out;
}

std::string client::auxv(pid_t pid) {
    select_process(pid);
    return xfer("auxv", "");
}

std::string client::exec_file(pid_t pid) { return xfer("exec-file", fmt::format("{:x}", pid)); }

std::string client::monitor(std::string_view command) {
    io_->send("qRcmd," + to_hex(command));
    std::string out;
    for (;;) {
        auto r = io_->receive();
        if (r == "OK") {
            return out;
        }
        if (r.empty()) {
            error::send("Remote agent does not support monitor commands (qRcmd).");
        }
        if (r[0] == 'O') {
            out += from_hex(std::string_view(r).substr(1));
            continue;
        }
        if (is_error(r)) {
            error::send(fmt::format("Protocol error with Rcmd: {}.", r));
        }
        out += from_hex(r);   // a reply of hex text alone
        return out;
    }
}

bool client::file_set_namespace(pid_t pid) {
    if (setfs_ == false) {
        return false;
    }
    if (setfs_ && fs_pid_ == pid) {
        return true;
    }
    auto r = io_->exchange(fmt::format("vFile:setfs:{:x}", pid));
    if (r.empty()) {
        setfs_ = false;   // gdbserver without multifs: its own namespace for every process
        return false;
    }
    file_result(r, "vFile:setfs", fmt::format("Selecting the mount namespace of process {}", pid));
    setfs_ = true;
    fs_pid_ = pid;
    return true;
}

int client::file_open(std::string_view path) {
    // Flags and mode are gdb's File-I/O values: O_RDONLY, no mode.
    auto r = io_->exchange("vFile:open:" + to_hex(path) + ",0,0");
    return static_cast<int>(file_result(r, "vFile:open", path));
}

std::size_t client::file_chunk() const {
    // The reply "F<count>;DATA" with DATA escaped (a byte may take two) must fit PacketSize;
    // gdbserver sends fewer bytes when escapes would overflow it, and says how many.
    return std::max<std::size_t>(64, features_.packet_size - 32);
}

std::string client::file_pread(int fd, std::size_t count, std::uint64_t offset) {
    count = std::min(count, file_chunk());
    auto r = io_->exchange(fmt::format("vFile:pread:{:x},{:x},{:x}", fd, count, offset));
    std::string_view attachment;
    auto n = file_result(r, "vFile:pread", fmt::format("Reading descriptor {} at offset {:#x}", fd, offset), &attachment);
    std::string data = unescape_binary(attachment);
    if (static_cast<std::uint64_t>(n) != data.size() || data.size() > count) {
        error::send(fmt::format("Remote agent sent {} bytes for a vFile:pread reply of {} (asked for {}).", data.size(),
                                n, count));
    }
    return data;
}

void client::file_close(int fd) {
    file_result(io_->exchange(fmt::format("vFile:close:{:x}", fd)), "vFile:close", fmt::format("Closing descriptor {}", fd));
}

}  // namespace ompdbg::tracer::rsp
