// The machine code of a jump pad (internal/jump_pad.hpp). Encodings are spelled out byte
// by byte with their mnemonic; the register block matches agent_abi.h.

#include "internal/jump_pad.hpp"
#include "internal/code_buffer.hpp"
#include "internal/native_direct.hpp"
#include "internal/native_filter.hpp"
#include "internal/x86_decoder.hpp"

#include <climits>
#include <cstring>
#include <initializer_list>

namespace ompdbg::tracer::internal {

namespace {

void restore_registers(code_buffer& w) {
    w.bytes({0x58, 0x5a, 0x59, 0x5b, 0x5e, 0x5f, 0x5d});  // pop rax rdx rcx rbx rsi rdi rbp
    w.bytes({0x48, 0x8d, 0x64, 0x24, 0x08});              // lea 8(%rsp),%rsp (rsp slot)
    for (int r = 0; r < 8; ++r) {
        w.bytes({0x41, 0x58 + r});                        // pop r8 .. r15
    }
    w.bytes({0x48, 0x8d, 0x64, 0x24, 0x08});              // lea 8(%rsp),%rsp (rip slot)
    w.bytes({0x9d});                                      // popfq
    w.lea_rsp(128);                                       // the red zone given back
}

}  // namespace

jump_pad_plan build_jump_pad(std::span<const std::byte> bytes, std::uint64_t site, std::uint64_t base,
                             std::uint64_t record, std::uint64_t evaluate, std::uint64_t function_end,
                             std::span<const std::uint8_t> condition, std::optional<native_count> count) {
    jump_pad_plan plan;
    auto reach = static_cast<std::int64_t>(base) - static_cast<std::int64_t>(site + 5);
    if (reach < INT32_MIN || reach > INT32_MAX) {
        plan.refusal = "no memory for a pad within 2 GB of the site";
        return plan;
    }
    code_buffer w(base);
    w.bytes({0x48, 0x8d, 0x64, 0x24, 0x80});              // lea -128(%rsp),%rsp (red zone)
    // The condition in native code first, when it has one: a false condition goes to the
    // relocated instructions from there, the rest on into the full path.
    std::optional<native_filter> filter;
    std::size_t filter_at = w.code().size();
    if (!condition.empty() || count) {
        filter = compile_native_filter(condition, site, count, flags_dead_at(bytes, site));
    }
    if (filter) {
        w.append(filter->code);
    }
    w.bytes({0x9c});                                      // pushfq
    std::size_t site_ref = w.disp32({0xff, 0x35});       // push site(%rip)
    for (int r = 7; r >= 0; --r) {
        w.bytes({0x41, 0x50 + r});                        // push r15 .. r8
    }
    w.bytes({0x54, 0x55, 0x57, 0x56, 0x53, 0x51, 0x52, 0x50});  // push rsp rbp rdi rsi rbx rcx rdx rax
    w.bytes({0x48, 0x8d, 0x84, 0x24, 0x10, 0x01, 0x00, 0x00});  // lea 272(%rsp),%rax: the site's rsp
    w.bytes({0x48, 0x89, 0x44, 0x24, 0x38});              // mov %rax,56(%rsp)
    std::size_t record_ref = w.disp32({0x48, 0x8b, 0x3d});   // mov record(%rip),%rdi
    w.bytes({0x48, 0x89, 0xe6});                          // mov %rsp,%rsi
    w.bytes({0x48, 0x89, 0xe3});                          // mov %rsp,%rbx (callee-saved)
    w.bytes({0x48, 0x83, 0xe4, 0xf0});                    // and $-16,%rsp
    std::size_t eval_ref = w.disp32({0xff, 0x15});       // call *evaluate(%rip)
    const std::uint64_t after_call = w.here();
    w.bytes({0x48, 0x89, 0xdc});                          // mov %rbx,%rsp
    w.bytes({0x85, 0xc0});                                // test %eax,%eax
    std::size_t stop_jump = w.disp32({0x0f, 0x85});      // jnz stop
    restore_registers(w);
    std::uint64_t relocated = w.here();
    auto moved = relocate_instructions(bytes, site, relocated, 5, function_end);
    if (!moved.moved) {
        plan.refusal = moved.refusal;
        return plan;
    }
    w.append(moved.moved->code);
    if (filter) {
        w.resolve(filter_at + filter->to_relocated, relocated);
    }
    // Back after the displaced bytes: a direct jmp (the pad is within rel32 reach of the
    // site), cheaper at every pass than the indirect one kept for a pad just at the edge.
    const std::uint64_t back = site + moved.moved->covered;
    const auto back_reach = static_cast<std::int64_t>(back) - static_cast<std::int64_t>(w.here() + 5);
    if (back_reach >= INT32_MIN && back_reach <= INT32_MAX) {
        w.resolve(w.disp32({0xe9}), back);                // jmp back
    } else {
        w.bytes({0xff, 0x25, 0x00, 0x00, 0x00, 0x00});    // jmp *0(%rip)
        w.u64(back);
    }
    w.resolve(stop_jump, w.here());
    restore_registers(w);
    std::size_t stop_ref = w.disp32({0xff, 0x25});       // jmp *stop_slot(%rip)
    std::uint64_t trap = w.here();
    w.bytes({0xcc});                                      // int3: the debugger takes over
    w.bytes({0x0f, 0x0b});                                // ud2: never reached
    while (w.here() % 8 != 0) {
        w.bytes({0xcc});
    }
    w.resolve(site_ref, w.here());
    w.u64(site);
    w.resolve(record_ref, w.here());
    w.u64(record);
    w.resolve(eval_ref, w.here());
    w.u64(evaluate);
    std::uint64_t stop_slot = w.here();
    w.resolve(stop_ref, stop_slot);
    w.u64(trap);
    if (w.code().size() > jump_pad_size) {
        if (filter) {
            return build_jump_pad(bytes, site, base, record, evaluate, function_end, {}, std::nullopt);   // the agent alone
        }
        plan.refusal = "the displaced instructions do not fit in a pad";
        return plan;
    }
    jump_pad pad;
    pad.code = std::move(w.code());
    pad.base = base;
    pad.site = site;
    pad.trap = trap;
    pad.relocated = relocated;
    pad.stop_slot = stop_slot;
    pad.after_call = after_call;
    pad.evaluate = evaluate;
    pad.native_condition = filter.has_value();
    pad.moved = std::move(*moved.moved);
    pad.site_jump.push_back(std::byte{0xe9});
    append_le(pad.site_jump, static_cast<std::uint32_t>(static_cast<std::int32_t>(reach)), 4);
    plan.pad = std::move(pad);
    return plan;
}

}  // namespace ompdbg::tracer::internal
