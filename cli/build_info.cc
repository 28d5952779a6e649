#include "cli/build_info.h"

#include <fmt/format.h>

namespace iotail::cli {

std::string VersionText(const char* program) {
  const BuildInfo& b = GetBuildInfo();
  return fmt::format("{} {}\ncommit: {} ({})\ncompiler: {}\nbuilt with: {}\n", program, b.version,
                     b.commit, b.tree, b.compiler, b.features);
}

}  // namespace iotail::cli
