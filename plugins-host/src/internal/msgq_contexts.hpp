#pragma once
// The debugger's side of the opaque mqs_image / mqs_process / mqs_type objects, shared by
// the callbacks (msgq_callbacks.cpp) and msgq_process (msgq_process.cpp).

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "internal/mqs_interface.hpp"
#include "internal/msgq_ob1.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/plugins/msgq.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::plugins::internal {

struct msgq_image_ctx;

/// One type the DLL looked up (mqs_type*): the complete definition found in some module.
struct msgq_type_entry {
    msgq_image_ctx* image = nullptr;  // that asked for it
    std::string name;
    dwarf::type type;    // typedefs and cv stripped
    std::string module;  // file it came from
};

/// One executable image (mqs_image*). We use one per process: the symbols and types the
/// DLL asks for live in the MPI library's shared objects, which we search all of.
struct msgq_image_ctx {
    tracer::target* tgt = nullptr;
    mqs_image_info* info = nullptr;  // the DLL's
    std::map<std::string, std::unique_ptr<msgq_type_entry>> types;  // by name; null: missing
    std::vector<std::string> missing_types;    // in the order the DLL asked
    std::vector<std::string> missing_fields;   // "type.field"
    std::vector<std::string> missing_symbols;
    std::size_t modules_seen = 0;
};

/// One process (mqs_process*).
struct msgq_process_ctx {
    msgq_image_ctx* image = nullptr;
    tracer::target* tgt = nullptr;
    int global_rank = 0;
    mqs_process_info* info = nullptr;  // the DLL's
    /// Our reader of ob1's unexpected messages (made at the first queue the DLL cannot show).
    std::unique_ptr<ob1_unexpected_reader> ob1;
};

/// Our callback tables (static).
const mqs_basic_callbacks& msgq_basic_callback_table();
const mqs_image_callbacks& msgq_image_callback_table();
const mqs_process_callbacks& msgq_process_callback_table();

/// A message-queue DLL was loaded / unloaded (dlclose done). When the last one is gone,
/// every block it allocated through the basic callbacks and never freed is given back.
void msgq_dll_loaded();
void msgq_dll_unloaded();

/// Registers/unregisters a context so that callbacks reject pointers that are not (or no
/// longer) ours.
void msgq_register(const void* ctx);
void msgq_unregister(const void* ctx);

/// The elf_file of a module (the module's own, else one opened and cached here).
std::shared_ptr<dwarf::elf_file> elf_of(const tracer::loaded_module& m);

/// The run-time address of a defined symbol in any module of `tgt` (object or function).
std::optional<std::uint64_t> find_symbol_address(tracer::target& tgt, const std::string& name);
/// The complete definition of a named C type in any module's DWARF ("opal_list_t").
std::unique_ptr<msgq_type_entry> find_complete_type(tracer::target& tgt, const std::string& name);
/// Byte offset of a member (searched through anonymous structs/unions), or nullopt.
std::optional<std::uint64_t> member_offset(const dwarf::type& t, const std::string& field);

}  // namespace ompdbg::plugins::internal
