#pragma once
/// Declarations of the session's types, for headers that only name them.

namespace ompdbg::debugger {

class session;
class session_observer;
struct inferior;
struct breakpoint;
struct breakpoint_location;
struct watchpoint;
struct user_settings;
struct stack_frame;
class mpi_job_base;
class mpi_job;

}  // namespace ompdbg::debugger
