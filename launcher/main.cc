#include "launcher/cli/cli.h"

int main(int argc, char** argv) { return shardctl::launcher::RunCli(argc, argv); }
