// ompdbg's reader of Open MPI ob1's unexpected messages (see internal/msgq_ob1.hpp):
// ompi_mpi_communicators -> each communicator's c_pml_comm (mca_pml_ob1_comm_t) -> procs[i]
// (mca_pml_ob1_comm_proc_t) -> unexpected_frags (an opal_list_t of mca_pml_ob1_recv_frag_t)
// and frags_cant_match (rings linked through the same list item, each with a `range` ring);
// the same mca_pml_ob1_comm_proc_t has send_sequence and expected_sequence.

#include "internal/msgq_ob1.hpp"

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "internal/msgq_contexts.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::plugins::internal {

namespace {

// ob1's header types (MCA_BTL_TAG_PML + 1, 2, 3): a match header carries the whole message
// after it; rendezvous and RDMA-get headers announce hdr_msg_length.
constexpr std::uint8_t hdr_type_match = 0x41;
constexpr std::uint8_t hdr_type_rndv = 0x42;
constexpr std::uint8_t hdr_type_rget = 0x43;

// Bounds against a corrupt or changing list: far above any real queue.
constexpr int max_items = 100000;
constexpr std::int64_t max_communicators = 1 << 20;
constexpr std::uint64_t max_procs = 1 << 24;

/// Offset and size of a member named by a dotted path ("hdr.hdr_match.hdr_tag"); an array
/// member's size is its element's (its first element is what is read).
struct field {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
};

}  // namespace

struct ob1_unexpected_reader::layout {
    std::uint64_t communicators = 0;        // &ompi_mpi_communicators
    field array_size, array_addr;           // opal_pointer_array_t
    field comm_contextid, comm_pml_comm;    // ompi_communicator_t
    field procs, num_procs;                 // mca_pml_ob1_comm_t
    field cant_match, unexpected;           // mca_pml_ob1_comm_proc_t
    field send_sequence, expected_sequence; // mca_pml_ob1_comm_proc_t
    field sentinel, list_next;              // opal_list_t, opal_list_item_t
    field frag_next, frag_range;            // mca_pml_ob1_recv_frag_t
    field hdr_type, hdr_src, hdr_tag, hdr_msg_length, seg_addr, seg_len;  // in a frag
    std::uint64_t match_hdr_len = 0;        // OMPI_PML_OB1_MATCH_HDR_LEN
};

void ob1_unexpected_reader::learn() {
    auto l = std::make_shared<layout>();
    // The selected PML is ob1 when its module's irecv is ob1's (mca_pml is a copy of it).
    auto ob1_irecv = find_symbol_address(tgt_, "mca_pml_ob1_irecv");
    auto pml = find_symbol_address(tgt_, "mca_pml");
    if (!ob1_irecv || !pml) {
        error::send("Open MPI's ob1 PML (mca_pml_ob1.so) is not loaded (MPI_Init has not run?)");
    }
    auto comms = find_symbol_address(tgt_, "ompi_mpi_communicators");
    if (!comms) {
        error::send("no symbol ompi_mpi_communicators");
    }
    l->communicators = *comms;

    std::vector<std::string> missing;
    auto path_in = [&](const std::string& type_name, const std::string& path) -> field {
        auto entry = find_complete_type(tgt_, type_name);
        if (!entry) {
            missing.push_back("type " + type_name);
            return {};
        }
        dwarf::type t = entry->type;
        field f;
        std::size_t start = 0;
        while (start <= path.size()) {
            std::size_t dot = path.find('.', start);
            std::string name = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            std::optional<dwarf::member> found;
            for (const auto& m : t.strip_cv_typedef().members()) {
                if (m.name == name) {
                    found = m;
                    break;
                }
            }
            if (!found) {
                missing.push_back("field " + type_name + "." + path);
                return {};
            }
            f.offset += found->byte_offset;
            t = found->get_type().strip_cv_typedef();
            if (t.kind() == dwarf::type_kind::array) {
                if (auto elem = t.target()) {
                    t = elem->strip_cv_typedef();
                }
            }
            f.size = t.size();
            if (dot == std::string::npos) {
                break;
            }
            start = dot + 1;
        }
        return f;
    };
    field pml_irecv = path_in("mca_pml_base_module_t", "pml_irecv");
    l->array_size = path_in("opal_pointer_array_t", "size");
    l->array_addr = path_in("opal_pointer_array_t", "addr");
    l->comm_contextid = path_in("ompi_communicator_t", "c_contextid");
    l->comm_pml_comm = path_in("ompi_communicator_t", "c_pml_comm");
    l->procs = path_in("mca_pml_ob1_comm_t", "procs");
    l->num_procs = path_in("mca_pml_ob1_comm_t", "num_procs");
    l->cant_match = path_in("mca_pml_ob1_comm_proc_t", "frags_cant_match");
    l->unexpected = path_in("mca_pml_ob1_comm_proc_t", "unexpected_frags");
    l->send_sequence = path_in("mca_pml_ob1_comm_proc_t", "send_sequence");
    l->expected_sequence = path_in("mca_pml_ob1_comm_proc_t", "expected_sequence");
    l->sentinel = path_in("opal_list_t", "opal_list_sentinel");
    l->list_next = path_in("opal_list_item_t", "opal_list_next");
    l->frag_next = path_in("mca_pml_ob1_recv_frag_t", "super.super.opal_list_next");
    l->frag_range = path_in("mca_pml_ob1_recv_frag_t", "range");
    l->hdr_type = path_in("mca_pml_ob1_recv_frag_t", "hdr.hdr_common.hdr_type");
    l->hdr_src = path_in("mca_pml_ob1_recv_frag_t", "hdr.hdr_match.hdr_src");
    l->hdr_tag = path_in("mca_pml_ob1_recv_frag_t", "hdr.hdr_match.hdr_tag");
    l->hdr_msg_length = path_in("mca_pml_ob1_recv_frag_t", "hdr.hdr_rndv.hdr_msg_length");
    l->seg_addr = path_in("mca_pml_ob1_recv_frag_t", "segments.seg_addr");
    l->seg_len = path_in("mca_pml_ob1_recv_frag_t", "segments.seg_len");
    // The match header's wire length: up to hdr_seq, or hdr_padding with heterogeneous support.
    if (auto entry = find_complete_type(tgt_, "mca_pml_ob1_match_hdr_t")) {
        if (auto pad = member_offset(entry->type, "hdr_padding")) {
            l->match_hdr_len = *pad + 2;
        } else if (auto seq = member_offset(entry->type, "hdr_seq")) {
            l->match_hdr_len = *seq + 2;
        } else {
            missing.push_back("field mca_pml_ob1_match_hdr_t.hdr_seq");
        }
    } else {
        missing.push_back("type mca_pml_ob1_match_hdr_t");
    }
    if (!missing.empty()) {
        std::string list;
        for (const auto& m : missing) {
            list += (list.empty() ? "" : ", ") + m;
        }
        error::send(fmt::format("missing {} in the MPI library's debug information", list));
    }
    auto selected = read_u64(*pml + pml_irecv.offset);
    if (!selected || *selected != *ob1_irecv) {
        error::send("the selected PML is not ob1");
    }
    layout_ = std::move(l);
}

std::optional<std::uint64_t> ob1_unexpected_reader::read_u64(std::uint64_t addr) const {
    std::uint64_t v = 0;
    auto bytes = std::as_writable_bytes(std::span(&v, 1));
    if (tgt_.try_read_memory(virt_addr(addr), bytes) != bytes.size()) {
        return std::nullopt;
    }
    return v;
}

// An unsigned field of 1, 2, 4 or 8 bytes (little-endian target).
std::uint64_t ob1_unexpected_reader::read_uint(std::uint64_t addr, std::uint64_t size) const {
    std::uint64_t v = 0;
    if (size == 0 || size > sizeof v) {
        error::send(fmt::format("unexpected field size {} at {:#x}", size, addr));
    }
    std::span<std::byte> bytes(reinterpret_cast<std::byte*>(&v), size);
    if (tgt_.try_read_memory(virt_addr(addr), bytes) != size) {
        error::send(fmt::format("Cannot access memory at address {:#x}", addr));
    }
    return v;
}

void ob1_unexpected_reader::read_frag(std::uint64_t frag, std::uint64_t context, bool out_of_sequence,
                                      std::vector<ob1_message>& out) const {
    const layout& l = *layout_;
    ob1_message m;
    m.context_id = context;
    m.out_of_sequence = out_of_sequence;
    m.source = static_cast<std::int32_t>(read_uint(frag + l.hdr_src.offset, l.hdr_src.size));
    m.tag = static_cast<std::int32_t>(read_uint(frag + l.hdr_tag.offset, l.hdr_tag.size));
    auto type = static_cast<std::uint8_t>(read_uint(frag + l.hdr_type.offset, l.hdr_type.size));
    if (type == hdr_type_match) {
        // The fragment holds the header and the message (MCA_PML_OB1_RECV_FRAG_INIT).
        std::uint64_t len = read_uint(frag + l.seg_len.offset, l.seg_len.size);
        m.bytes = len >= l.match_hdr_len ? static_cast<std::int64_t>(len - l.match_hdr_len) : 0;
        m.data = read_uint(frag + l.seg_addr.offset, l.seg_addr.size) + l.match_hdr_len;
    } else if (type == hdr_type_rndv || type == hdr_type_rget) {
        m.bytes = static_cast<std::int64_t>(read_uint(frag + l.hdr_msg_length.offset, l.hdr_msg_length.size));
    } else {
        error::send(fmt::format("unexpected fragment {:#x} has header type {:#x}", frag, type));
    }
    out.push_back(m);
}

ob1_state ob1_unexpected_reader::read() {
    if (!layout_) {
        learn();
    }
    const layout& l = *layout_;
    auto need = [&](std::uint64_t addr) {
        auto v = read_u64(addr);
        if (!v) {
            error::send(fmt::format("Cannot access memory at address {:#x}", addr));
        }
        return *v;
    };
    // Lists link the fragments' list items (their first member: offset 0 in 4.1).
    const std::uint64_t item_in_frag = l.frag_next.offset - l.list_next.offset;
    ob1_state state;
    std::vector<ob1_message>& out = state.unexpected;
    auto size = static_cast<std::int32_t>(read_uint(l.communicators + l.array_size.offset, l.array_size.size));
    std::uint64_t slots = need(l.communicators + l.array_addr.offset);
    if (size < 0 || size > max_communicators) {
        error::send(fmt::format("ompi_mpi_communicators has an implausible size ({})", size));
    }
    for (std::int32_t i = 0; i < size && slots != 0; ++i) {
        std::uint64_t comm = need(slots + 8 * static_cast<std::uint64_t>(i));
        if (comm == 0) {
            continue;
        }
        std::uint64_t pml_comm = need(comm + l.comm_pml_comm.offset);
        if (pml_comm == 0) {
            continue;   // MPI_COMM_NULL, or a communicator being built
        }
        std::uint64_t context = read_uint(comm + l.comm_contextid.offset, l.comm_contextid.size);
        std::uint64_t procs = need(pml_comm + l.procs.offset);
        std::uint64_t nprocs = read_uint(pml_comm + l.num_procs.offset, l.num_procs.size);
        if (procs == 0 || nprocs > max_procs) {
            continue;
        }
        for (std::uint64_t p = 0; p < nprocs; ++p) {
            std::uint64_t proc = need(procs + 8 * p);
            if (proc == 0) {
                continue;   // ob1 creates a peer's state at its first message
            }
            state.sequences.push_back(ob1_peer_sequence{
                context, static_cast<std::int64_t>(p),
                static_cast<std::uint32_t>(read_uint(proc + l.send_sequence.offset, l.send_sequence.size)),
                static_cast<std::uint16_t>(read_uint(proc + l.expected_sequence.offset, l.expected_sequence.size))});
            // unexpected_frags: from the sentinel's next around to the sentinel.
            std::uint64_t sentinel = proc + l.unexpected.offset + l.sentinel.offset;
            std::uint64_t item = need(sentinel + l.list_next.offset);
            for (int n = 0; item != sentinel && item != 0; ++n) {
                if (n == max_items) {
                    error::send(fmt::format("the unexpected-message list at {:#x} does not end", sentinel));
                }
                read_frag(item - item_in_frag, context, false, out);
                item = need(item + l.list_next.offset);
            }
            // frags_cant_match: a ring ordered by sequence, each element heading a ring of
            // fragments with contiguous sequence numbers (`range`).
            std::uint64_t head = need(proc + l.cant_match.offset);
            std::uint64_t frag = head;
            for (int n = 0; frag != 0; ++n) {
                if (n == max_items) {
                    error::send(fmt::format("the out-of-sequence list at {:#x} does not end", head));
                }
                read_frag(frag, context, true, out);
                if (std::uint64_t range = need(frag + l.frag_range.offset); range != 0) {
                    std::uint64_t r = range;
                    for (int k = 0; k < max_items; ++k) {
                        read_frag(r, context, true, out);
                        r = need(r + l.frag_next.offset);
                        r = r == 0 ? 0 : r - item_in_frag;
                        if (r == range || r == 0) {
                            break;
                        }
                    }
                }
                frag = need(frag + l.frag_next.offset);
                frag = frag == 0 ? 0 : frag - item_in_frag;
                if (frag == head) {
                    break;
                }
            }
        }
    }
    return state;
}

}  // namespace ompdbg::plugins::internal
