// The mmap engine on a file another process truncates during the run (issue 38): the copy that
// faults is the job's I/O error (EIO), the job ends with it, and the run ends with its summary and
// exit status 1, not with SIGBUS (status 135, no summary).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"

namespace run_mmap_truncate_test {

namespace fs = std::filesystem;
using iotail::testing::ScratchDirTest;
using nlohmann::json;

using RunMmapTruncateTest = ScratchDirTest;

TEST_F(RunMmapTruncateTest, ATruncatedFileIsAnIoErrorWithASummaryNotSigbus) {
  for (const std::string rw : {"randread", "randwrite"}) {
    SCOPED_TRACE(rw);
    const fs::path f = dir_ / "m";
    fs::remove(f);
    std::ofstream(f, std::ios::binary) << std::string(16 << 20, 'x');
    const fs::path summary = dir_ / "summary.json";
    // The truncation comes 1 s into a 4 s run (the layout and mapping take well under that).
    const iotail::testing::CommandResult r = iotail::testing::RunShell(
        "(sleep 1; truncate -s 0 " + f.string() + ") & " + IOTAIL_BINARY +
            " run --live_format=none --name=m --ioengine=mmap --filename=" + f.string() +
            " --size=16m --bs=4k --rw=" + rw +
            " --runtime=4 --time_based --output-format=json --output=" + summary.string() +
            "; s=$?; wait; exit $s",
        dir_);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("I/O error"), std::string::npos) << r.err;
    std::ifstream in(summary);
    ASSERT_TRUE(in) << "no summary";
    const json j = json::parse(in, nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    ASSERT_EQ(j["jobs"].size(), 1u);
    EXPECT_EQ(j["jobs"][0]["error"], 5);  // EIO
    const char* dir = rw == "randread" ? "read" : "write";
    EXPECT_GT(j["jobs"][0][dir]["total_ios"].get<uint64_t>(), 0u);  // the I/Os before it count
  }
}

}  // namespace run_mmap_truncate_test
