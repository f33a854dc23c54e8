#pragma once
/// x86-64 Linux system call names <-> numbers (`catch syscall`).

#include <optional>
#include <string_view>

namespace ompdbg::debugger {

/// The number of the system call `name` ("write" -> 1); nullopt when unknown.
std::optional<int> syscall_number(std::string_view name);
/// The name of system call `number` (1 -> "write"); nullopt when there is none.
std::optional<std::string_view> syscall_name(int number);

}  // namespace ompdbg::debugger
