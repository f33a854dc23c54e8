#pragma once
// The registers of a remote thread (LLDB's GDBRemoteRegisterContext): the agent's `g`
// packet, laid out by its target description, to and from libtracer's `registers`
// (user_regs_struct and user_fpregs_struct, as ptrace gives them here).

#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/tracer/registers.hpp"
#include "ompdbg/tracer/rsp_client.hpp"

namespace ompdbg::tracer::internal {

/// The registers in `raw` (a `g` reply laid out as `layout`); registers the layout lacks
/// stay zero.
registers registers_from_remote(const std::vector<rsp::register_desc>& layout, std::string_view raw);
/// `raw` with every register of `layout` that `regs` holds replaced (for `G`).
std::string registers_to_remote(const std::vector<rsp::register_desc>& layout, std::string raw, const registers& regs);

}  // namespace ompdbg::tracer::internal
