#include "git_revision.h"  // generated at build time: SHARDCTL_GIT_REVISION
#include "launcher/cli/cli.h"

int main(int argc, char** argv) {
  return shardctl::launcher::RunCli(argc, argv, SHARDCTL_GIT_REVISION);
}
