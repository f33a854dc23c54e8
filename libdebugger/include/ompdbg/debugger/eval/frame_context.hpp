#pragma once
/// The context in which expressions are evaluated and variables located: one frame of one
/// thread (registers, CFA, load bias, TLS, memory of the target), or — with no process — the
/// program's ELF file alone (initialised globals, as gdb's `print global` before `run`).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/debugger/stack/stack.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/location.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/registers.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::debugger {

class session;

class frame_context final : public dwarf::location_context, public dwarf::eval_context {
public:
    /// The selected frame of the selected thread when there is a live target (throws
    /// "No frame selected." if the thread has no stack), else a static context over the
    /// program's ELF (throws "No symbol table is loaded.  Use the \"file\" command." when
    /// there is no program either).
    static frame_context for_selection(session& s);
    /// Frame `frame` (from session::stack(tid)) of thread `tid`.
    frame_context(session& s, pid_t tid, const stack_frame& frame);
    /// Static context: no process, addresses are file addresses of the program.
    explicit frame_context(session& s);

    bool has_frame() const { return frame_ != nullptr; }
    /// Appends (address, size) of every memory read of the expression evaluator to `log`
    /// (nullptr: stop): what a computed expression's value depends on (watch a + b).
    void record_reads(std::vector<std::pair<std::uint64_t, std::size_t>>* log) {
        if (log != nullptr) {
            read_named_register_ = false;
        }
        read_log_ = log;
    }
    /// Whether the evaluator read a register by name ($rsp) since record_reads.
    bool read_named_register() const { return read_named_register_; }
    const stack_frame* frame() const { return frame_; }

    /// The value of a DWARF variable of module `module_` (nullptr: this frame's module):
    /// located through evaluate_location and read (optimized_out when it is).
    dwarf::value read_variable(const dwarf::variable& v, const tracer::loaded_module* module = nullptr);
    /// The frame's parameters (is_parameter) or locals, innermost block first, as gdb's
    /// `info args` / `info locals` order them.
    std::vector<dwarf::variable> frame_variables(bool parameters);
    /// The registers of this frame (frame 0: the thread's; outer frames: frame 0's with
    /// the unwinder's recovered values laid over). Throws "No registers." without a process.
    tracer::registers frame_registers() const;

    // dwarf::location_context
    std::uint64_t pc() const override;
    std::uint64_t load_bias() const override;
    std::optional<std::uint64_t> read_register(int dwarf_regno) const override;
    void read_memory(std::uint64_t addr, std::span<std::byte> out) const override;
    std::optional<std::uint64_t> cfa() const override;
    std::optional<std::uint64_t> tls_address(std::uint64_t offset) const override;
    std::optional<std::uint64_t> entry_register_value(int dwarf_regno) const override;

    // dwarf::eval_context
    std::optional<dwarf::value> lookup_variable(std::string_view name) override;
    std::optional<dwarf::value> lookup_function(std::string_view name) override;
    std::optional<dwarf::type> lookup_type(std::string_view name) override;
    std::optional<std::uint64_t> read_register(std::string_view name) override;
    void write_register(std::string_view name, std::uint64_t v) override;
    void read_memory(std::uint64_t addr, std::span<std::byte> out) override;
    void write_memory(std::uint64_t addr, std::span<const std::byte> data) override;
    std::optional<std::uint64_t> read_dwarf_register(int regno) override;
    std::string symbolize(std::uint64_t addr) override;
    std::optional<dwarf::value> history(int index) override;
    int history_size() override;
    std::optional<dwarf::value> lookup_enumerator(std::string_view name) override;
    std::optional<dwarf::value> convenience(std::string_view name) override;
    void set_convenience(std::string_view name, const dwarf::value& v) override;
    void write_dwarf_register(int regno, std::uint64_t v) override;
    /// True when the frame's compilation unit is C++.
    bool language_cplus() override;
    /// Reports "TEXT" to the session's observer (expression_warning), where gdb prints
    /// "warning: TEXT" and goes on (frame_context_warnings.cpp).
    void warn(std::string_view text) override;
    /// Every definition named `name` in the search order (C++ overloads);
    /// frame_context_calls.cpp.
    std::vector<dwarf::value> lookup_functions(std::string_view name) override;
    /// Runs the call in this context's thread (infcall/inferior_call.hpp); the frame is found
    /// again afterwards, the stacks having been read anew.
    void check_can_call() override;
    dwarf::value call_function(const dwarf::function_call& call) override;
    std::uint64_t push_to_target(std::span<const std::byte> bytes) override;

private:
    /// The modules to search, this frame's first (static context: the program's ELF).
    std::vector<const tracer::loaded_module*> search_order() const;
    void read_static_memory(std::uint64_t addr, std::span<std::byte> out) const;
    std::optional<std::uint64_t> entry_register_value_from(const std::vector<stack_frame>& frames,
                                                           int dwarf_regno) const;

    session& s_;
    pid_t tid_ = 0;
    const stack_frame* frame_ = nullptr;
    /// The module whose variable is being located (location_context's load bias / TLS).
    mutable const tracer::loaded_module* current_module_ = nullptr;
    tracer::loaded_module static_module_;   ///< static context: the program, bias 0
    std::vector<std::pair<std::uint64_t, std::size_t>>* read_log_ = nullptr;
    bool read_named_register_ = false;
    /// Bottom of the bytes pushed for this expression's calls (push_to_target); nullopt: none.
    std::optional<std::uint64_t> scratch_bottom_;
};

/// Sets the session's convenience variable $NAME (gdb's internal variables: $_exitcode,
/// $_shell_exitcode, $_ ...); nullopt makes it void again.
void set_convenience_variable(session& s, std::string_view name, std::optional<dwarf::value> v);
/// An `int` value, the type gdb gives its integer internal variables.
dwarf::value int_value(std::int64_t v);

}  // namespace ompdbg::debugger
