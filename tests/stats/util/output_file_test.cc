#include "stats/util/output_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace iotail::stats {
namespace output_file_test {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeScratchDir("output_file"); }
  void TearDown() override { fs::remove_all(dir_); }
  // The temporaries beside the outputs (NAME.tmp.PID).
  size_t Temporaries() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
      n += e.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
    }
    return n;
  }
  fs::path dir_;
};

TEST_F(OutputFileTest, TheTemporaryAppearsOnlyWhenWrittenAndTheResultWhole) {
  const std::string path = (dir_ / "out.json").string();
  {
    OutputFile f(path, "--output");
    EXPECT_EQ(Temporaries(), 0u);  // a run killed before its end leaves nothing behind
    f.Write("{}\n");
    EXPECT_EQ(Temporaries(), 1u);
    EXPECT_FALSE(fs::exists(path));
    f.Commit();
  }
  EXPECT_EQ(Temporaries(), 0u);
  EXPECT_EQ(testing::ReadFile(path), "{}\n");
}

TEST_F(OutputFileTest, AMissingDirectoryIsFoundBeforeAnythingIsWritten) {
  EXPECT_THROW(OutputFile((dir_ / "no" / "out").string(), "--output"), std::system_error);
  EXPECT_THROW(OutputFile((dir_ / "no").string() + "/", "--output"), std::system_error);
}

// What the SIGINT/SIGTERM handler of cli/main.cc calls before the signal ends the process.
TEST_F(OutputFileTest, RemoveOutputTemporariesRemovesTheLiveOnes) {
  OutputFile a((dir_ / "a").string(), "-o");
  OutputFile b((dir_ / "b").string(), "-o");
  a.Write("half of a merge");
  b.Write("another");
  ASSERT_EQ(Temporaries(), 2u);
  RemoveOutputTemporaries();
  EXPECT_EQ(Temporaries(), 0u);
  EXPECT_FALSE(fs::exists(dir_ / "a"));
}

}  // namespace output_file_test
}  // namespace iotail::stats
