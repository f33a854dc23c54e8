// gdb's Remote Serial Protocol below the remote process: framing, checksums, acks, escapes,
// run-length encoding, and what a malformed, truncated or silent agent does to the
// packet layer and the client. A scripted transport plays the agent (the real gdbserver
// cannot be made to send garbage); the e2e tests run the real one (remote_targets.cpp).

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <deque>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/rsp_client.hpp"
#include "ompdbg/tracer/rsp_packets.hpp"

using namespace ompdbg::tracer;
using namespace ompdbg::tracer::rsp;

namespace {

/// An agent that answers from a script: each entry is what arrives after our next write
/// (nullopt: the stream closes). Everything written is recorded.
struct scripted_transport final : transport {
    std::deque<std::optional<std::string>> replies;
    std::string written;
    std::string pending;
    bool closed = false;
    std::optional<std::string> written_at_first_read;   ///< what had been written when we first read

    void write(std::string_view bytes) override {
        written += bytes;
        // Acks and the interrupt byte get no reply of their own; a '-' gets the next
        // scripted reply (the agent's resend).
        if (bytes != "-" && bytes.size() < 2) {
            return;
        }
        if (!replies.empty()) {
            auto r = replies.front();
            replies.pop_front();
            if (!r) {
                closed = true;
            } else {
                pending += *r;
            }
        }
    }
    std::optional<std::string> read(int) override {
        if (!written_at_first_read) {
            written_at_first_read = written;
        }
        if (!pending.empty()) {
            std::string out;
            out.swap(pending);
            return out;
        }
        if (closed) {
            return std::nullopt;
        }
        return std::string();   // the timeout: nothing came
    }
    void write_byte_async(char c) noexcept override { written += c; }
    std::string describe() const override { return "| scripted"; }
    std::string end_reason() override { return "agent gone (exit status 1)"; }
};

packet_io make_io(scripted_transport*& t, int timeout_ms = 200) {
    auto owned = std::make_unique<scripted_transport>();
    t = owned.get();
    return packet_io(std::move(owned), timeout_ms);
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ompdbg::error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("rsp frames a packet with its checksum and escapes the reserved bytes", "[tracer]") {
    CHECK(frame("OK") == "$OK#9a");
    CHECK(frame("qSupported") == "$qSupported#37");
    // '$', '#', '}' and '*' travel as '}' and the byte XOR 0x20.
    CHECK(escape_binary(std::string("a$#}*b")) == "a}\x04}\x03}]}\x0a" "b");
    CHECK(unescape_binary(escape_binary(std::string("\x00$#}*\xff", 6))) == std::string("\x00$#}*\xff", 6));
    CHECK(checksum("") == 0);
}

TEST_CASE("rsp expands run-length encoding and rejects a count with nothing to repeat", "[tracer]") {
    // "0* " is '0' and 3 more ('*' then ' ' = 32 - 29).
    CHECK(expand_rle("0* ") == "0000");
    CHECK(expand_rle("ab") == "ab");
    CHECK_THROWS_WITH(expand_rle("*#"), Catch::Contains("nothing to repeat"));
    CHECK_THROWS_WITH(expand_rle("a*\x01"), Catch::Contains("out of range"));
    CHECK(from_hex("00ff41") == std::string("\x00\xff" "A", 3));
    CHECK_THROWS_WITH(from_hex("0g"), Catch::Contains("malformed hex"));
    CHECK_THROWS_WITH(from_hex("123"), Catch::Contains("odd length"));
}

TEST_CASE("rsp acknowledges good packets, asks again after a bad checksum, and gives up after three", "[tracer]") {
    scripted_transport* t;
    auto io = make_io(t);
    t->replies.push_back("+$OK#9a");
    CHECK(io.exchange("qC") == "OK");
    CHECK(t->written == "$qC#b4+");

    // A corrupted packet is answered with '-'; the resent one is accepted.
    t->written.clear();
    t->replies.push_back("+$OK#00");
    t->replies.push_back("$OK#9a");
    CHECK(io.exchange("qC") == "OK");
    CHECK(t->written == "$qC#b4-+");

    // In no-ack mode a bad checksum is an error at once, never a wait.
    io.set_no_ack(true);
    t->replies.push_back("$OK#00");
    CHECK(error_of([&] { io.exchange("qC"); }).find("bad checksum") != std::string::npos);
}

TEST_CASE("rsp pipelines requests without acknowledgements: all are sent before the first reply is read and the "
          "replies come back in order with a notification among them kept",
          "[tracer]") {
    scripted_transport* t;
    auto io = make_io(t);
    io.set_no_ack(true);
    t->replies.push_back("$01#61");
    t->replies.push_back("%Stop:T05thread:p2.2;#88$02#62");
    t->replies.push_back("$E01#a6");
    std::vector<std::string> requests{"m10,1", "m20,1", "m30,1"};
    auto replies = io.exchange_all(requests);
    CHECK(replies == std::vector<std::string>{"01", "02", "E01"});
    REQUIRE(t->written_at_first_read);
    CHECK(*t->written_at_first_read == frame("m10,1") + frame("m20,1") + frame("m30,1"));
    auto note = io.try_notification(0);
    REQUIRE(note);
    CHECK(note->find("T05thread:p2.2;") != std::string::npos);

    // With acknowledgements on, one request at a time.
    scripted_transport* u;
    auto acked = make_io(u);
    u->replies.push_back("+$01#61");
    u->replies.push_back("+$02#62");
    CHECK(acked.exchange_all({"m10,1", "m20,1"}) == std::vector<std::string>{"01", "02"});
    REQUIRE(u->written_at_first_read);
    CHECK(*u->written_at_first_read == frame("m10,1"));
}

TEST_CASE("rsp ends a truncated or missing reply with one line after its timeout", "[tracer]") {
    scripted_transport* t;
    auto io = make_io(t, 100);
    io.set_no_ack(true);
    auto start = std::chrono::steady_clock::now();
    t->replies.push_back("$T05thread:p1.1;");   // cut short: no '#'
    CHECK(error_of([&] { io.exchange("?"); }).find("sent a truncated packet: \"$T05thread:p1.1;\"") != std::string::npos);
    t->replies.push_back("");   // nothing at all
    CHECK(error_of([&] { io.exchange("?"); }).find("did not answer within") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("rsp reports a closed stream with the remote shell's own message", "[tracer]") {
    scripted_transport* t;
    auto io = make_io(t);
    io.set_no_ack(true);
    t->replies.push_back(std::nullopt);
    CHECK(error_of([&] { io.exchange("qSupported"); }) ==
          "Remote connection closed (| scripted): agent gone (exit status 1)");
}

TEST_CASE("rsp parses stop replies with gdb's signal numbers", "[tracer]") {
    auto r = parse_stop_reply("T05thread:p1f.20;swbreak:;core:1;");
    CHECK(r.what == stop_reply::kind::stopped);
    CHECK(r.signo == SIGTRAP);
    CHECK(r.pid == 0x1f);
    CHECK(r.tid == 0x20);
    CHECK(r.swbreak);
    CHECK(r.fields.at("core") == "1");
    // gdb numbers SIGUSR1 30 and SIGCHLD 20; Linux 10 and 17.
    CHECK(parse_stop_reply("S1e").signo == SIGUSR1);
    CHECK(parse_stop_reply("T14thread:p2.2;").signo == SIGCHLD);
    auto w = parse_stop_reply("W03;process:2a");
    CHECK(w.what == stop_reply::kind::exited);
    CHECK(w.exit_code == 3);
    CHECK(w.pid == 0x2a);
    // gdbserver's multiprocess exit replies carry the value in as few digits as it needs.
    auto w0 = parse_stop_reply("W0;process:1c1c");
    CHECK(w0.what == stop_reply::kind::exited);
    CHECK(w0.exit_code == 0);
    CHECK(w0.pid == 0x1c1c);
    CHECK(parse_stop_reply("W2a").exit_code == 42);
    CHECK(parse_stop_reply("X9;process:5").signo == SIGKILL);
    CHECK(parse_stop_reply("X9;process:5").pid == 5);
    CHECK_THROWS_WITH(parse_stop_reply("W;process:5"), Catch::Contains("malformed stop reply"));
    CHECK(parse_stop_reply("X09").what == stop_reply::kind::terminated);
    CHECK(parse_stop_reply("X09").signo == SIGKILL);
    CHECK_THROWS_WITH(parse_stop_reply("Q"), Catch::Contains("malformed stop reply"));
    CHECK_THROWS_WITH(parse_stop_reply("Tzz"), Catch::Contains("malformed stop reply"));
    CHECK(signal_to_gdb(SIGUSR1) == 30);
    CHECK(signal_from_gdb(signal_to_gdb(SIGRTMIN + 1)) == SIGRTMIN + 1);
}

TEST_CASE("rsp stop replies of forks, vforks and execs are process events, other stops are not", "[tracer]") {
    // As gdbserver sends them with fork-events+, vfork-events+ and exec-events+.
    auto f = parse_stop_reply("T05fork:p596c.596c;06:0000000000000000;thread:p595f.595f;core:0;");
    CHECK(f.is_process_event());
    CHECK(f.pid == 0x595f);
    CHECK(parse_thread_id(f.fields.at("fork")) == std::pair<pid_t, pid_t>{0x596c, 0x596c});
    auto v = parse_stop_reply("T05vfork:p10.10;thread:p8.8;");
    CHECK(v.is_process_event());
    CHECK(v.fields.count("fork") == 0);
    CHECK(parse_stop_reply("T05vforkdone:;thread:p8.8;").is_process_event());
    auto e = parse_stop_reply("T05exec:2f746d702f70726f6373;thread:p8.8;");
    CHECK(e.is_process_event());
    CHECK(from_hex(e.fields.at("exec")) == "/tmp/procs");
    CHECK_FALSE(parse_stop_reply("T05thread:p8.8;swbreak:;").is_process_event());
    CHECK_FALSE(parse_stop_reply("T05syscall_entry:3b;thread:p8.8;").is_process_event());
    CHECK_FALSE(parse_stop_reply("W00;process:8").is_process_event());
}

TEST_CASE("rsp client negotiates features once and reads thread and library lists", "[tracer]") {
    auto owned = std::make_unique<scripted_transport>();
    auto* t = owned.get();
    t->replies.push_back("+" + frame("PacketSize=47ff;qXfer:threads:read+;qXfer:libraries-svr4:read+;multiprocess+;"
                                     "QStartNoAckMode+;swbreak+"));
    t->replies.push_back("+" + frame("OK"));   // QStartNoAckMode (still acked)
    t->replies.push_back(frame("OK"));         // !
    client c(std::make_unique<packet_io>(std::move(owned), 200), true);
    CHECK(c.supported().packet_size == 0x47ff);
    CHECK(c.supported().multiprocess);
    CHECK(c.supported().xfer_threads);
    CHECK_FALSE(c.supported().xfer_auxv);
    CHECK(c.is_extended());

    t->replies.push_back(frame("l<?xml version=\"1.0\"?><threads><thread id=\"p1a.1a\" core=\"0\" name=\"a&amp;b\"/>"
                               "<thread id=\"p1a.1b\" core=\"1\" name=\"w\"/></threads>"));
    auto threads = c.threads();
    REQUIRE(threads.size() == 2);
    CHECK(threads[0].pid == 0x1a);
    CHECK(threads[0].tid == 0x1a);
    CHECK(threads[0].name == "a&b");
    CHECK(threads[1].tid == 0x1b);

    // The library list of process 0x1a: Hg selects it first.
    t->replies.push_back(frame("OK"));
    t->replies.push_back(frame("m<library-list-svr4 version=\"1.0\" main-lm=\"0x10\">"));
    t->replies.push_back(frame("l<library name=\"/lib/libc.so.6\" lm=\"0x20\" l_addr=\"0x7f00\" l_ld=\"0x7f80\"/>"
                               "</library-list-svr4>"));
    std::uint64_t main_lm = 0;
    auto libs = c.libraries(0x1a, &main_lm);
    CHECK(main_lm == 0x10);
    REQUIRE(libs.size() == 1);
    CHECK(libs[0].name == "/lib/libc.so.6");
    CHECK(libs[0].l_addr == 0x7f00);
    CHECK(libs[0].l_ld == 0x7f80);
    CHECK(t->written.find("$Hgp1a.1a#") != std::string::npos);

    // Malformed XML is one error line, not a crash.
    t->replies.push_back(frame("l<threads><thread id=\"p1.1 name=\"x\"/>"));
    CHECK_THROWS_WITH(c.threads(), Catch::Contains("malformed"));
    // An error reply to a memory read is a short read, not an exception.
    t->replies.push_back(frame("E14"));
    std::byte buf[8];
    CHECK(c.read_memory(0x1a, 0x1000, buf) == 0);
}

TEST_CASE("rsp keeps a non-stop notification that arrives before a reply, and drains the stops behind it with "
          "vStopped",
          "[tracer]") {
    auto owned = std::make_unique<scripted_transport>();
    auto* t = owned.get();
    t->replies.push_back("+" + frame("PacketSize=47ff;multiprocess+;QStartNoAckMode+;QNonStop+;qXfer:threads:read+"));
    t->replies.push_back("+" + frame("OK"));   // QStartNoAckMode
    t->replies.push_back(frame("OK"));         // !
    client c(std::make_unique<packet_io>(std::move(owned), 200), true);
    REQUIRE(c.supported().non_stop);
    t->replies.push_back(frame("OK"));   // QNonStop:1
    c.set_non_stop();
    CHECK(c.is_non_stop());

    // vCont answers OK at once; a thread's stop comes as %Stop before the next reply.
    t->replies.push_back(frame("OK"));
    c.resume({{'c', 0, 0x1a, 0}});
    CHECK(t->written.find("$vCont;c:p1a.-1#") != std::string::npos);
    const std::string note = "Stop:T05thread:p1a.1b;swbreak:;";
    t->replies.push_back("%" + note + fmt::format("#{:02x}", checksum(note)) + frame("OK"));
    c.stop(0x1a);
    CHECK(t->written.find("$vCont;t:p1a.-1#") != std::string::npos);
    auto n = c.next_notification(0);
    REQUIRE(n);
    CHECK(n->signo == SIGTRAP);
    CHECK(n->tid == 0x1b);
    t->replies.push_back(frame("T00thread:p1a.1a;"));
    t->replies.push_back(frame("OK"));
    auto more = c.next_stopped();
    REQUIRE(more);
    CHECK(more->signo == 0);
    CHECK(more->tid == 0x1a);
    CHECK_FALSE(c.next_stopped());
    CHECK_FALSE(c.next_notification(0));

    // A notification with a bad checksum or cut short is one error line, never a hang.
    t->replies.push_back("%Stop:T05thread:p1a.1b;#00");
    CHECK_THROWS_WITH(c.stop(0x1a), Catch::Contains("notification with a bad checksum"));
    t->replies.push_back("%Stop:T05thr");
    CHECK_THROWS_WITH(c.stop(0x1a), Catch::Contains("truncated packet"));
}

TEST_CASE("rsp names non-stop mode when the agent lacks it", "[tracer]") {
    auto owned = std::make_unique<scripted_transport>();
    auto* t = owned.get();
    t->replies.push_back("+" + frame("PacketSize=47ff;multiprocess+"));
    t->replies.push_back("+" + frame("OK"));   // !
    client c(std::make_unique<packet_io>(std::move(owned), 200), true);
    CHECK_THROWS_WITH(c.set_non_stop(), Catch::Contains("lacks non-stop mode (QNonStop)"));
}

TEST_CASE("rsp client reads a file of the agent's host with vFile: in a process's mount namespace and names the "
          "host's errno",
          "[tracer]") {
    auto owned = std::make_unique<scripted_transport>();
    auto* t = owned.get();
    t->replies.push_back("+" + frame("PacketSize=100;multiprocess+;QStartNoAckMode+"));
    t->replies.push_back("+" + frame("OK"));   // QStartNoAckMode
    t->replies.push_back(frame("OK"));         // !
    client c(std::make_unique<packet_io>(std::move(owned), 200), true);

    t->replies.push_back(frame("F0"));
    CHECK(c.file_set_namespace(0x1a));
    CHECK(t->written.find("$vFile:setfs:1a#") != std::string::npos);
    auto sent = t->written.size();
    CHECK(c.file_set_namespace(0x1a));   // the same namespace: nothing sent
    CHECK(t->written.size() == sent);

    t->replies.push_back(frame("F7"));
    CHECK(c.file_open("/bin/prog") == 7);
    CHECK(t->written.find("$vFile:open:" + to_hex("/bin/prog") + ",0,0#") != std::string::npos);

    // Binary data, escaped as the x packet's; the count asked is bounded by PacketSize.
    const std::string bytes("\x00$#}*\xff", 6);
    t->replies.push_back(frame("F6;" + bytes));
    CHECK(c.file_pread(7, 1 << 20, 0x40) == bytes);
    CHECK(c.file_chunk() == 0x100 - 32);
    CHECK(t->written.find(fmt::format("$vFile:pread:7,{:x},40#", c.file_chunk())) != std::string::npos);
    t->replies.push_back(frame("F0;"));
    CHECK(c.file_pread(7, 16, 0x1000).empty());   // the end of the file
    t->replies.push_back(frame("F3;ab"));
    CHECK_THROWS_WITH(c.file_pread(7, 16, 0), Catch::Contains("sent 2 bytes for a vFile:pread reply of 3"));
    t->replies.push_back(frame("F0"));
    c.file_close(7);
    CHECK(t->written.find("$vFile:close:7#") != std::string::npos);

    // Errors are the host's errno, in gdb's File-I/O numbering.
    t->replies.push_back(frame("F-1,2"));
    CHECK(error_of([&] { c.file_open("/nope"); }) == "/nope on the remote host: No such file or directory");
    t->replies.push_back(frame("F-1,5b"));
    CHECK(error_of([&] { c.file_open("/long"); }) == "/long on the remote host: File name too long");
    t->replies.push_back(frame(""));
    CHECK(error_of([&] { c.file_open("/x"); }) == "Remote agent does not support vFile:open.");
    t->replies.push_back(frame("Fzz"));
    CHECK_THROWS_WITH(c.file_open("/x"), Catch::Contains("malformed"));
}

TEST_CASE("rsp client uses the agent's own mount namespace when vFile:setfs is not supported and asks only once",
          "[tracer]") {
    auto owned = std::make_unique<scripted_transport>();
    auto* t = owned.get();
    t->replies.push_back("+" + frame("PacketSize=47ff;multiprocess+;QStartNoAckMode+"));
    t->replies.push_back("+" + frame("OK"));   // QStartNoAckMode
    t->replies.push_back(frame("OK"));         // !
    client c(std::make_unique<packet_io>(std::move(owned), 200), true);
    t->replies.push_back(frame(""));
    CHECK_FALSE(c.file_set_namespace(0x1a));
    auto sent = t->written.size();
    CHECK_FALSE(c.file_set_namespace(0x1b));
    CHECK(t->written.size() == sent);
}
