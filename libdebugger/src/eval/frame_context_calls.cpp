// frame_context's part in function calls: the overload set of a name, and the call itself,
// run in the context's thread by the model (infcall/inferior_call.hpp).

#include "ompdbg/debugger/eval/frame_context.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "ompdbg/debugger/infcall/inferior_call.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/elf_file.hpp"

namespace ompdbg::debugger {

std::vector<dwarf::value> frame_context::lookup_functions(std::string_view name) {
    std::vector<dwarf::value> out;
    for (const tracer::loaded_module* m : search_order()) {
        if (!m->elf) {
            continue;
        }
        if (dwarf::debug_info* dbg = m->elf->debug()) {
            for (const dwarf::function& fn : dbg->find_functions(name)) {
                if (fn.is_inlined || fn.ranges.empty()) {
                    continue;
                }
                dwarf::value v;
                v.val_type = dwarf::type(fn.die);
                v.address = m->to_runtime(fn.low_pc()).addr();
                out.push_back(v);
            }
        }
        if (!out.empty()) {
            return out;   // the first module that defines the name, as gdb's lookup
        }
    }
    if (auto v = lookup_function(name)) {
        out.push_back(*v);
        return out;
    }
    // Before `run` a shared library's function is only a PLT stub of the executable
    // ("strlen@plt"): gdb finds that minimal symbol, and the call is then refused for want
    // of a process rather than for want of the name.
    const std::string stub = std::string(name) + "@plt";
    for (const tracer::loaded_module* m : search_order()) {
        if (!m->elf) {
            continue;
        }
        for (const dwarf::symbol& sym : m->elf->plt_symbols()) {
            if (sym.name == stub) {
                dwarf::value v;
                v.val_type = dwarf::nodebug_function_type();
                v.address = m->to_runtime(sym.value).addr();
                out.push_back(v);
                return out;
            }
        }
    }
    return out;
}

namespace {

// True when `addr` is a GNU indirect function (glibc's strlen, memcpy): its symbol's code
// is a resolver that returns the implementation to call, as gdb resolves it.
bool is_ifunc(tracer::process& p, std::uint64_t addr, const std::string& name) {
    const tracer::loaded_module* m = p.module_at(virt_addr(addr));
    if (m == nullptr || !m->elf) {
        return false;
    }
    std::uint64_t file_addr = m->to_file(virt_addr(addr));
    auto sym = m->elf->symbol_at(file_addr);
    if (sym && sym->kind == dwarf::symbol_kind::ifunc && sym->value == file_addr) {
        return true;
    }
    for (const dwarf::symbol& s : m->elf->find_symbols(name)) {
        if (s.kind == dwarf::symbol_kind::ifunc && s.value == file_addr) {
            return true;
        }
    }
    return false;
}

}  // namespace

void frame_context::check_can_call() {
    if (frame_ == nullptr) {
        error::send("You can't do that without a process to debug.");
    }
    infcall::require_callable(s_);
}

dwarf::value frame_context::call_function(const dwarf::function_call& call_in) {
    if (frame_ == nullptr || s_.process() == nullptr) {
        error::send("You can't do that without a process to debug.");
    }
    int level = frame_->level;
    dwarf::function_call call = call_in;
    if (s_.process()->is_alive() && is_ifunc(*s_.process(), call.address, call.name)) {
        dwarf::function_call resolver;
        resolver.address = call.address;
        resolver.name = call.name;
        resolver.return_type = dwarf::type::pointer_to(dwarf::type());
        dwarf::value target = infcall::call_function(s_, tid_, resolver, scratch_bottom_);
        std::uint64_t resolved = 0;
        std::memcpy(&resolved, target.bytes.data(), std::min<std::size_t>(8, target.bytes.size()));
        call.address = resolved;
    }
    dwarf::value v = infcall::call_function(s_, tid_, call, scratch_bottom_);
    // The call resumed the thread: the stack (and this frame) are read anew.
    const std::vector<stack_frame>& fresh = s_.stack(tid_);
    if (fresh.empty()) {
        error::send("No frame selected.");
    }
    frame_ = &fresh[std::min<std::size_t>(static_cast<std::size_t>(std::max(level, 0)), fresh.size() - 1)];
    current_module_ = frame_->module;
    return v;
}

std::uint64_t frame_context::push_to_target(std::span<const std::byte> bytes) {
    if (frame_ == nullptr || s_.process() == nullptr) {
        error::send("You can't do that without a process to debug.");
    }
    scratch_bottom_ = infcall::push_scratch(s_, tid_, bytes, scratch_bottom_);
    return *scratch_bottom_;
}

}  // namespace ompdbg::debugger
