// What this binary is: its version, the git commit it was built from and whether that tree had
// uncommitted changes, the compiler, and the libraries and kernel interfaces found when it was
// configured. The definition is generated at build time (cmake/build_info.cmake), rewritten only
// when its text changes. Immutable; thread-safe to read.
#pragma once

#include <string>

namespace iotail::cli {

struct BuildInfo {
  const char* version;   // the project's version (CMake's project())
  const char* commit;    // git rev-parse --short=12 HEAD, or "unknown" outside a git checkout
  const char* tree;      // "clean", "dirty" (uncommitted changes to tracked files) or "unknown"
  const char* compiler;  // CMake's compiler id and version, e.g. "GNU 12.2.0"
  const char* features;  // what was found at configure time, e.g. "liburing 2.3, libaio, ..."
};

const BuildInfo& GetBuildInfo();

// `iotail --version`: the version line, then the commit, the compiler and the features.
std::string VersionText(const char* program);

}  // namespace iotail::cli
