#include "cli/cli.h"

int main(int argc, char** argv) { return sx::cli_main(argc, argv); }
