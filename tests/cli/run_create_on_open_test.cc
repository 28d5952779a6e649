// create_on_open=1 with the engines that move data, compared with fio 3.33: the file is created
// (mode 0600) when it is opened, never laid out, so a write job writes it as it goes and a read
// job fails at the first read past its end (fio's EIO, "full resid").
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace iotail::testing {
namespace run_create_on_open_test {

namespace fs = std::filesystem;

const std::string kJob = "--name=c --filename=f --size=1m --bs=4k --create_on_open=1 ";

TEST_F(FioSemanticsTest, CreateOnOpenWriteJobCreatesTheFileAsItWritesAsFio) {
  for (const std::string engine : {"psync", "libaio --iodepth=8"}) {
    SCOPED_TRACE(engine);
    ExpectBoth(kJob + "--rw=randwrite --ioengine=" + engine, 0, [&](const auto& jobs, const auto&) {
      ASSERT_EQ(jobs.size(), 1u);
      EXPECT_EQ(jobs[0].writes, 256u);
      EXPECT_EQ(jobs[0].write_bytes, 1u << 20);
    });
    for (const char* tool : {"iotail", "fio"}) {
      if (std::string(tool) == "fio" && !HaveFio()) continue;
      SCOPED_TRACE(tool);
      const fs::path f = dir_ / tool / "f";
      struct stat st {};
      ASSERT_EQ(stat(f.c_str(), &st), 0);
      EXPECT_EQ(st.st_size, 1 << 20);
      EXPECT_EQ(st.st_mode & 0777, 0600u);
      fs::remove(f);
    }
  }
}

// No layout: a read job on a missing file reads nothing and fails with EIO; on a short one it
// reads what is there, then fails.
TEST_F(FioSemanticsTest, CreateOnOpenReadJobFailsPastTheEndAsFio) {
  ExpectBoth(kJob + "--rw=read", 1, [&](const auto& jobs, const auto&) {
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].error, 5);
    EXPECT_EQ(jobs[0].read_bytes, 0u);
  });
  for (const char* tool : {"iotail", "fio"}) {
    const fs::path d = dir_ / tool;
    fs::create_directories(d);
    std::ofstream(d / "f", std::ios::binary | std::ios::trunc) << std::string(256 << 10, 'x');
  }
  ExpectBoth(kJob + "--rw=read", 1, [&](const auto& jobs, const auto&) {
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].error, 5);
    EXPECT_EQ(jobs[0].read_bytes, 256u << 10);
  });
}

}  // namespace run_create_on_open_test
}  // namespace iotail::testing
