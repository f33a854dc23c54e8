// The model's evaluation hooks in the CLI: stops shown as gdb shows them (cli_eval_hooks.hpp).

#include "cli_eval_hooks.hpp"

#include "session.hpp"
#include "stop_printer.hpp"

namespace ompdbg::app {

}  // namespace ompdbg::app
