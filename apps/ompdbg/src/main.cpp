#include "cli_main.hpp"

int main(int argc, char** argv) {
    return ompdbg::app::run_cli(argc, argv);
}
