#include "launcher/ops/supervise.h"

#include <filesystem>

#include "launcher/model/deployment_dir.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {

Outcome<int> Supervise(const Spec& spec, const std::function<void(const nlohmann::json&)>& events) {
  DeploymentDir dir = DirOf(spec);
  if (!std::filesystem::exists(dir.DeploymentFile())) {
    return Failure::Usage("no deployment \"" + spec.name + "\" in " +
                          dir.root().parent_path().string() + " (create it with shardctl up)");
  }
  return RunSupervisor(dir, events);
}

}  // namespace shardctl::launcher
