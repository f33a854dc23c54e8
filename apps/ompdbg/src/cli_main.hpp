#pragma once
/// The whole command-line program (options, session, -ex/-x, prompt, batch exit status);
/// main() is a one-line call so the same code is testable and linkable as a library.

namespace ompdbg::app {

/// Runs ompdbg with the process' argv; returns the exit status.
int run_cli(int argc, char** argv);

}  // namespace ompdbg::app
