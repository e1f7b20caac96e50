#include "cli/cli.h"
#include "util/stop_signals.h"

// Before any other constructor and before main: a stopping signal that lands
// while the process is still starting is recorded and answered, never fatal.
__attribute__((constructor(101))) static void install_stop_signals_first() { sx::StopSignals::install(); }

int main(int argc, char** argv) { return sx::cli_main(argc, argv); }
