#pragma once
namespace sx {
// The whole command line: parses argv, runs the subcommand, returns the exit status.
int cli_main(int argc, char** argv);
}  // namespace sx
