// The layering rules of docs/ARCHITECTURE.md, checked on the sources: every `#include "..."` of
// our own headers must point down the layers (cli -> engine -> stats) and, inside stats/, only to
// the concept folders a folder may use. A new include that breaks a rule fails here, naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace layering_test {

namespace fs = std::filesystem;

// Folder -> the folders its files may include (besides itself).
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"stats/util", {}},
      {"stats/core", {}},
      {"stats/record", {"stats/core"}},
      {"stats/logs", {"stats/core", "stats/util"}},
      {"stats/analysis", {"stats/core", "stats/logs", "stats/util"}},
      {"stats/report", {"stats/core", "stats/record", "stats/logs"}},
      {"stats/compat", {"stats/core", "stats/util"}},
  };
  return kAllowed;
}

// stats/util holds small helpers that use nothing of ours (JSON text, name tables, mapped files),
// so every folder of stats may use it, as it may use the standard library.
constexpr std::string_view kOpenToAll = "stats/util";

// engine/ runs jobs; the outputs of a run (summaries, log sinks, samples) are stats/report/'s
// and are assembled by cli/ (and mpi/), so nothing under engine/ may include stats/report/.
constexpr std::string_view kReport = "stats/report/";

std::string FolderOf(const std::string& path) { return fs::path(path).parent_path().string(); }

TEST(LayeringTest, IncludesPointDownTheLayers) {
  const fs::path root = IOTAIL_SOURCE_DIR;
  const std::regex include(R"re(^\s*#\s*include\s+"((stats|engine|cli|mpi)/[^"]+)")re");
  size_t checked = 0;
  for (const std::string top : {"stats", "engine", "cli", "mpi"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cc") continue;
      const std::string rel = fs::relative(entry.path(), root).string();
      const std::string folder = FolderOf(rel);
      std::ifstream in(entry.path());
      int line_no = 0;
      for (std::string line; std::getline(in, line);) {
        ++line_no;
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        ++checked;
        const std::string target = m[1].str();
        const std::string target_top = m[2].str();
        const std::string where = rel + ":" + std::to_string(line_no) + " includes " + target;
        EXPECT_TRUE(fs::exists(root / target)) << where << " (no such file)";
        if (top == "stats") {
          ASSERT_EQ(target_top, "stats") << where << ": stats/ uses nothing of ours above it";
          const std::string target_folder = FolderOf(target);
          if (target_folder == folder || target_folder == kOpenToAll) continue;
          const auto rule = Allowed().find(folder);
          ASSERT_NE(rule, Allowed().end()) << rel << ": stats/ files live in a concept folder";
          EXPECT_TRUE(rule->second.count(target_folder))
              << where << ": " << folder << " may not use " << target_folder;
        } else if (top == "engine") {
          EXPECT_NE(target_top, "cli") << where << ": engine/ may not use cli/";
          EXPECT_NE(target_top, "mpi") << where << ": engine/ may not use mpi/";
          EXPECT_FALSE(target.starts_with(kReport))
              << where << ": engine/ may not use stats/report/ (a run's outputs are its caller's)";
        } else if (top == "cli") {
          EXPECT_NE(target_top, "mpi")
              << where << ": cli/ may not use mpi/ (iotail never links MPI)";
        }
      }
    }
  }
  EXPECT_GT(checked, 100u);  // the scan found the sources
}

}  // namespace layering_test
