#pragma once
// The parts the data commands share: the /FMT argument split, an address from a value, and
// the commands register_data_commands (commands_data.cpp) registers from the files beside it.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::app {

class session;

/// "/x foo" → ("x", "foo"); "foo" → ("", "foo").
std::pair<std::string, std::string_view> split_format(std::string_view args);

/// The address a value stands for: where an array or function is, else the value itself.
std::uint64_t value_as_address(const dwarf::value& v);

void cmd_x(session& s, std::string_view args);                       ///< commands_memory.cpp
void cmd_info_registers(session& s, std::string_view args);          ///< commands_registers.cpp
void cmd_info_sharedlibrary(session& s, std::string_view args);      ///< commands_info_symbol.cpp
void cmd_info_symbol(session& s, std::string_view args);             ///< commands_info_symbol.cpp
void cmd_info_address(session& s, std::string_view args);            ///< commands_info_symbol.cpp
void cmd_list(session& s, std::string_view args);                    ///< commands_list.cpp

}  // namespace ompdbg::app
