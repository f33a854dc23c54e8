// One MPI process seen through its message-queue DLL: image and process set-up (with the
// missing types, fields and symbols named when the MPI library lacks debug information),
// and the communicator and operation iterators turned into plain C++ values.

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>

#include "internal/msgq_api.hpp"
#include "internal/msgq_contexts.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/plugins/msgq.hpp"

namespace ompdbg::plugins {

namespace {

// The DLL writes warnings to stderr (Open MPI's "WARNING: ... unable to find debugging
// information"); libraries never print, so they are captured and sent to the plugin log.
class stderr_capture {
public:
    stderr_capture() {
        std::fflush(stderr);
        file_ = std::tmpfile();
        saved_ = file_ != nullptr ? ::dup(STDERR_FILENO) : -1;
        if (saved_ >= 0 && ::dup2(::fileno(file_), STDERR_FILENO) < 0) {
            ::close(saved_);
            saved_ = -1;
        }
    }
    ~stderr_capture() {
        std::fflush(stderr);
        if (saved_ >= 0) {
            ::dup2(saved_, STDERR_FILENO);
            ::close(saved_);
        }
        if (file_ != nullptr) {
            std::rewind(file_);
            char line[512];
            while (std::fgets(line, sizeof line, file_) != nullptr) {
                try {
                    log::write(log::channel::plugin, "msgq DLL stderr: {}", line);
                } catch (...) {
                }
            }
            std::fclose(file_);
        }
    }
    stderr_capture(const stderr_capture&) = delete;
    stderr_capture& operator=(const stderr_capture&) = delete;

private:
    std::FILE* file_ = nullptr;
    int saved_ = -1;
};

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) {
        out += out.empty() ? "" : ", ";
        out += s;
    }
    return out;
}

// The modules of the MPI library (those that define its debugger symbols) that have no
// DWARF: "libmpi.so.40".
std::vector<std::string> mpi_modules_without_debug_info(tracer::target& tgt) {
    std::vector<std::string> out;
    for (const auto& m : tgt.modules()) {
        auto elf = internal::elf_of(m);
        if (!elf) {
            continue;
        }
        bool is_mpi = !elf->find_symbols("MPIR_dll_name").empty() ||
                      !elf->find_symbols("mpimsgq_dll_locations").empty() ||
                      !elf->find_symbols("ompi_mpi_communicators").empty();
        if (is_mpi && elf->debug() == nullptr) {
            out.push_back(m.path.string());
        }
    }
    return out;
}

// Open MPI's DLL reports "%s" in its has_queues message for the image name.
std::string dll_message(const char* msg, const std::string& image) {
    if (msg == nullptr) {
        return {};
    }
    std::string s = msg;
    if (auto pos = s.find("%s"); pos != std::string::npos) {
        s.replace(pos, 2, image);
    }
    for (char& c : s) {
        if (c == '\n') {
            c = ' ';
        }
    }
    return s;
}

}  // namespace

msgq_process::msgq_process(std::shared_ptr<msgq_library> lib, tracer::target& tgt, int global_rank)
    : lib_(std::move(lib)),
      image_(std::make_unique<internal::msgq_image_ctx>()),
      process_(std::make_unique<internal::msgq_process_ctx>()) {
    image_->tgt = &tgt;
    process_->tgt = &tgt;
    process_->image = image_.get();
    process_->global_rank = global_rank;
    internal::msgq_register(image_.get());
    internal::msgq_register(process_.get());
    const auto& api = lib_->api();
    auto* image = reinterpret_cast<mqs_image*>(image_.get());
    auto* process = reinterpret_cast<mqs_process*>(process_.get());
    const std::string exe = tgt.executable().string();

    int rc = 0;
    char* message = nullptr;
    {
        stderr_capture capture;
        rc = api.mqs_setup_image(image, &internal::msgq_image_callback_table());
        if (rc == mqs_ok) {
            rc = api.mqs_image_has_queues(image, &message);
        }
    }
    std::string problem;
    if (rc == mqs_ok && !image_->missing_fields.empty()) {
        rc = -1;
    }
    if (rc != mqs_ok) {
        if (!image_->missing_types.empty() || !image_->missing_fields.empty()) {
            std::string missing;
            if (!image_->missing_types.empty()) {
                missing = "type" + std::string(image_->missing_types.size() > 1 ? "s " : " ") +
                          join(image_->missing_types);
            }
            if (!image_->missing_fields.empty()) {
                missing += missing.empty() ? "" : "; ";
                missing += "field" + std::string(image_->missing_fields.size() > 1 ? "s " : " ") +
                           join(image_->missing_fields);
            }
            auto stripped = mpi_modules_without_debug_info(tgt);
            problem = fmt::format(
                "The message-queue DLL {} needs the MPI library's debug information, which process {} "
                "lacks: missing {}{}{}. Use an MPI library built with debug information "
                "(scripts/bootstrap builds Open MPI with it into ~/.cache/ompdbg/openmpi-4.1.4) and "
                "link the program against it",
                lib_->path().string(), tgt.pid(), missing,
                stripped.empty() ? "" : " (no DWARF in ", stripped.empty() ? "" : join(stripped) + ")");
        } else if (rc == -1 || message == nullptr) {
            problem = fmt::format("The message-queue DLL {} cannot show the queues of process {}: {}",
                                  lib_->path().string(), tgt.pid(), lib_->error_string(rc));
        } else {
            problem = fmt::format("The message-queue DLL {} cannot show the queues of process {}: {}",
                                  lib_->path().string(), tgt.pid(), dll_message(message, exe));
        }
    }
    if (problem.empty()) {
        rc = api.mqs_setup_process(process, &internal::msgq_process_callback_table());
        if (rc != mqs_ok) {
            problem = fmt::format("mqs_setup_process failed for process {}: {}{}", tgt.pid(),
                                  lib_->error_string(rc),
                                  image_->missing_symbols.empty()
                                      ? ""
                                      : " (missing symbols " + join(image_->missing_symbols) + ")");
        }
    }
    if (problem.empty()) {
        message = nullptr;
        rc = api.mqs_process_has_queues(process, &message);
        if (rc != mqs_ok) {
            problem = fmt::format("Process {} has no message queues to show: {}{}", tgt.pid(),
                                  message != nullptr ? dll_message(message, exe) : lib_->error_string(rc),
                                  image_->missing_symbols.empty()
                                      ? ""
                                      : " (missing symbols " + join(image_->missing_symbols) + "; MPI_Init has not run?)");
        }
    }
    if (!problem.empty()) {
        // The destructor does not run for a throwing constructor.
        release();
        error::send(problem);
    }
}

void msgq_process::release() noexcept {
    if (!lib_) {
        return;
    }
    const auto& api = lib_->api();
    if (process_) {
        if (process_->info != nullptr) {
            api.mqs_destroy_process_info(process_->info);
            process_->info = nullptr;
        }
        internal::msgq_unregister(process_.get());
    }
    if (image_) {
        if (image_->info != nullptr) {
            api.mqs_destroy_image_info(image_->info);
            image_->info = nullptr;
        }
        for (auto& [name, entry] : image_->types) {
            if (entry) {
                internal::msgq_unregister(entry.get());
            }
        }
        internal::msgq_unregister(image_.get());
    }
    lib_.reset();
}

msgq_process::~msgq_process() { release(); }

int msgq_process::global_rank() const { return process_->global_rank; }
tracer::target& msgq_process::target() const { return *process_->tgt; }

namespace {

// Open MPI's DLL names the request it read ("Send: 0x55d0c0a1b2c0"); its count and
// datatype are read from the MPI library's own DWARF (the DLL reports bytes only).
struct request_reader {
    explicit request_reader(tracer::target& t) : tgt(t) {}
    tracer::target& tgt;
    bool tried = false;
    std::optional<std::uint64_t> count_off, datatype_off, name_off;

    void enrich(msgq_operation& op) {
        if (op.extra_text.empty()) {
            return;
        }
        static const std::regex request_re(R"(^(Send|Receive): 0x([0-9a-fA-F]+))");
        std::smatch m;
        if (!std::regex_search(op.extra_text[0], m, request_re)) {
            return;
        }
        if (!tried) {
            tried = true;
            try {
                if (auto req = internal::find_complete_type(tgt, "mca_pml_base_request_t")) {
                    count_off = internal::member_offset(req->type, "req_count");
                    datatype_off = internal::member_offset(req->type, "req_datatype");
                }
                if (auto dt = internal::find_complete_type(tgt, "ompi_datatype_t")) {
                    name_off = internal::member_offset(dt->type, "name");
                }
            } catch (const std::exception& e) {
                log::write(log::channel::plugin, "msgq request layout: {}", e.what());
            }
        }
        std::uint64_t req = std::stoull(m[2].str(), nullptr, 16);
        auto read_u64 = [&](std::uint64_t addr) -> std::optional<std::uint64_t> {
            std::uint64_t v = 0;
            auto bytes = std::as_writable_bytes(std::span(&v, 1));
            if (tgt.try_read_memory(virt_addr(addr), bytes) != bytes.size()) {
                return std::nullopt;
            }
            return v;
        };
        if (count_off) {
            op.count = read_u64(req + *count_off);
        }
        if (datatype_off && name_off) {
            if (auto dt = read_u64(req + *datatype_off); dt && *dt != 0) {
                try {
                    op.datatype = tgt.read_string(virt_addr(*dt + *name_off), 64);
                } catch (const std::exception&) {
                }
            }
        }
    }
};

constexpr int max_communicators = 4096;
constexpr const char* no_information_text = "the message-queue DLL gives no information about this queue";
constexpr int max_operations = 100000;

}  // namespace

std::vector<msgq_communicator> msgq_process::communicators() {
    if (!lib_) {
        error::send("The message-queue DLL was released");
    }
    const auto& api = lib_->api();
    auto* process = reinterpret_cast<mqs_process*>(process_.get());
    int rc = api.mqs_update_communicator_list(process);
    if (rc != mqs_ok) {
        error::send(fmt::format("Cannot read the communicators of process {}: {}",
                                process_->tgt->pid(), lib_->error_string(rc)));
    }
    request_reader reader(*process_->tgt);
    std::vector<msgq_communicator> out;
    rc = api.mqs_setup_communicator_iterator(process);
    while (rc == mqs_ok && static_cast<int>(out.size()) < max_communicators) {
        mqs_communicator raw{};
        if (api.mqs_get_communicator(process, &raw) != mqs_ok) {
            break;
        }
        msgq_communicator comm;
        comm.unique_id = raw.unique_id;
        comm.name.assign(raw.name, strnlen(raw.name, sizeof raw.name));
        comm.local_rank = raw.local_rank;
        comm.size = raw.size;
        if (raw.size > 0 && raw.size < (1 << 24)) {
            // Room to spare: the DLL writes its group's entry count, which it does not report.
            std::vector<int> group(static_cast<std::size_t>(raw.size) * 2 + 16, -1);
            if (api.mqs_get_comm_group(process, group.data()) == mqs_ok) {
                group.resize(static_cast<std::size_t>(raw.size));
                comm.world_ranks = std::move(group);
            }
        }
        const std::pair<msgq_queue, msgq_queue_contents*> queues[] = {
            {msgq_queue::pending_sends, &comm.sends},
            {msgq_queue::pending_receives, &comm.receives},
            {msgq_queue::unexpected_messages, &comm.unexpected},
        };
        for (auto [cls, contents] : queues) {
            int qrc = api.mqs_setup_operation_iterator(process, static_cast<int>(cls));
            if (qrc != mqs_ok) {
                contents->available = false;
                contents->unavailable_reason =
                    qrc == mqs_no_information ? no_information_text : lib_->error_string(qrc);
                continue;
            }
            for (int n = 0; n < max_operations; ++n) {
                mqs_pending_operation raw_op{};
                int orc = api.mqs_next_operation(process, &raw_op);
                if (orc == mqs_end_of_list) {
                    break;
                }
                if (orc != mqs_ok) {
                    contents->available = false;
                    contents->unavailable_reason =
                        orc == mqs_no_information ? no_information_text : lib_->error_string(orc);
                    break;
                }
                msgq_operation op;
                op.queue = cls;
                op.status = raw_op.status == mqs_st_matched    ? msgq_status::matched
                            : raw_op.status == mqs_st_complete ? msgq_status::complete
                                                               : msgq_status::pending;
                op.desired_local_rank = raw_op.desired_local_rank;
                op.desired_global_rank = raw_op.desired_global_rank;
                op.tag_wild = raw_op.tag_wild != 0;
                op.desired_tag = raw_op.desired_tag;
                op.desired_length = raw_op.desired_length;
                op.system_buffer = raw_op.system_buffer != 0;
                op.buffer = raw_op.buffer;
                op.actual_local_rank = raw_op.actual_local_rank;
                op.actual_global_rank = raw_op.actual_global_rank;
                op.actual_tag = raw_op.actual_tag;
                op.actual_length = raw_op.actual_length;
                for (const auto& line : raw_op.extra_text) {
                    std::size_t len = strnlen(line, sizeof line);
                    if (len > 0) {
                        op.extra_text.emplace_back(line, len);
                    }
                }
                reader.enrich(op);
                contents->operations.push_back(std::move(op));
            }
        }
        out.push_back(std::move(comm));
        rc = api.mqs_next_communicator(process);
    }
    fill_unexpected_from_ob1(out);
    return out;
}

// The unexpected queues the DLL gives no information about (Open MPI 4.1's answers
// mqs_no_information) are read from ob1's own lists; when that fails too, the reason joins
// the DLL's. ob1's sequence numbers of every peer come from the same walk.
void msgq_process::fill_unexpected_from_ob1(std::vector<msgq_communicator>& comms) {
    internal::ob1_state state;
    try {
        if (!process_->ob1) {
            process_->ob1 = std::make_unique<internal::ob1_unexpected_reader>(*process_->tgt);
        }
        state = process_->ob1->read();
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "ob1 unexpected messages of process {}: {}", process_->tgt->pid(), e.what());
        for (auto& c : comms) {
            c.sequences_note = fmt::format("{} cannot read them: {}", msgq_ob1_reader_name, e.what());
            if (!c.unexpected.available && c.unexpected.unavailable_reason == no_information_text) {
                c.unexpected.unavailable_reason += fmt::format(", and {} cannot read it: {}", msgq_ob1_reader_name, e.what());
            }
        }
        return;
    }
    for (auto& c : comms) {
        auto global_of = [&](std::int64_t local) -> std::int64_t {
            return local >= 0 && static_cast<std::size_t>(local) < c.world_ranks.size()
                       ? c.world_ranks[static_cast<std::size_t>(local)]
                       : -1;
        };
        c.sequences_read = true;
        for (const auto& seq : state.sequences) {
            if (seq.context_id == c.unique_id) {
                // ob1 numbers messages from 1: a peer's expected_sequence starts at 1, its
                // first message's sequence number (mca_pml_ob1_comm_proc_construct).
                c.sequences.push_back(msgq_peer_sequence{seq.peer, global_of(seq.peer), seq.sent,
                                                         static_cast<std::uint16_t>(seq.arrived - 1)});
            }
        }
        auto& q = c.unexpected;
        if (q.available || q.unavailable_reason != no_information_text) {
            continue;
        }
        q.available = true;
        q.unavailable_reason.clear();
        q.reader = msgq_ob1_reader_name;
        for (const auto& m : state.unexpected) {
            if (m.context_id != c.unique_id) {
                continue;
            }
            msgq_operation op;
            op.queue = msgq_queue::unexpected_messages;
            op.status = msgq_status::pending;
            op.desired_local_rank = op.actual_local_rank = m.source;
            op.desired_global_rank = op.actual_global_rank = global_of(m.source) < 0 ? m.source : global_of(m.source);
            op.desired_tag = op.actual_tag = m.tag;
            op.desired_length = op.actual_length = m.bytes;
            op.system_buffer = true;
            op.buffer = m.data;
            if (m.out_of_sequence) {
                op.extra_text.emplace_back("out of sequence");
            }
            q.operations.push_back(std::move(op));
        }
    }
}

std::optional<int> mpi_rank_from_environment(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::vector<std::string> entries;
    std::string entry;
    while (std::getline(in, entry, '\0')) {
        entries.push_back(entry);
    }
    return mpi_rank_from_environment(entries);
}

std::optional<int> mpi_rank_from_environment(const std::vector<std::string>& entries) {
    std::optional<int> pmix, pmi;
    for (const auto& entry : entries) {
        auto value_of = [&](std::string_view key) -> std::optional<int> {
            if (entry.rfind(key, 0) != 0) {
                return std::nullopt;
            }
            try {
                return std::stoi(entry.substr(key.size()));
            } catch (...) {
                return std::nullopt;
            }
        };
        if (auto v = value_of("OMPI_COMM_WORLD_RANK=")) {
            return v;
        }
        if (auto v = value_of("PMIX_RANK=")) {
            pmix = v;
        }
        if (auto v = value_of("PMI_RANK=")) {
            pmi = v;
        }
    }
    return pmix ? pmix : pmi;
}

}  // namespace ompdbg::plugins
