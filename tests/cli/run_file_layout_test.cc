// `iotail run` against fio 3.33 on how a job's files are named and made (issue 24): filename_format
// ($jobname, $jobnum, $filenum in any case), fio's layout (a job that reads lays its files out with
// data; one that only writes just preallocates them, by --fallocate, unless --overwrite),
// allow_file_create=0, and refill_buffers. Each tool runs in its own scratch directory; the files
// it leaves there are compared (names, sizes, whether blocks are allocated, whether data is zeros).
// Skips the comparisons, with the reason, where fio is not installed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace run_file_layout_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;

bool HaveFio() { return iotail::testing::Capture("command -v fio >/dev/null").status == 0; }

// What a tool left in a file: its size, whether at least `size` bytes are allocated, and its
// distinct 4 KiB blocks (and whether any is all zeros).
struct FileFacts {
  uint64_t size = 0;
  bool allocated = false;
  size_t distinct_blocks = 0;
  bool zero_block = false;
  bool operator==(const FileFacts&) const = default;
};

std::ostream& operator<<(std::ostream& os, const FileFacts& f) {
  return os << "size " << f.size << (f.allocated ? ", allocated" : ", sparse") << ", "
            << f.distinct_blocks << " distinct blocks" << (f.zero_block ? ", a zero block" : "");
}

FileFacts Facts(const fs::path& path) {
  FileFacts facts;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return facts;
  facts.size = static_cast<uint64_t>(st.st_size);
  facts.allocated = static_cast<uint64_t>(st.st_blocks) * 512 >= facts.size && facts.size > 0;
  std::ifstream in(path, std::ios::binary);
  std::set<std::string> blocks;
  const std::string zeros(4096, '\0');
  for (std::string block(4096, '\0'); in.read(block.data(), 4096);) {
    facts.zero_block = facts.zero_block || block == zeros;
    blocks.insert(block);
  }
  facts.distinct_blocks = blocks.size();
  return facts;
}

class RunFileLayoutTest : public iotail::testing::ScratchDirTest {
 protected:
  // Runs `tool` (fio or iotail) with ARGS in DIR/TOOL, psync, quiet.
  CommandResult Run(const std::string& tool, const std::string& args) {
    const fs::path d = ToolDir(tool);
    const std::string bin = tool == "fio" ? "fio --output-format=terse"
                                          : std::string(IOTAIL_BINARY) +
                                                " run --live_format=none --output-format=terse";
    return iotail::testing::RunShell("cd " + d.string() + " && " + bin + " " + args, d);
  }
  std::set<std::string> Names(const std::string& tool) const {
    std::set<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / tool)) {
      if (e.is_regular_file() && e.path().filename() != "stderr") {
        names.insert(fs::relative(e.path(), dir_ / tool).string());
      }
    }
    return names;
  }
  // Both tools run ARGS (each must exit 0); the facts of the file `name` each left.
  std::pair<FileFacts, FileFacts> Both(const std::string& args, const std::string& name) {
    for (const char* tool : {"iotail", "fio"}) {
      const CommandResult r = Run(tool, args);
      EXPECT_EQ(r.status, 0) << tool << ": " << r.err;
    }
    return {Facts(dir_ / "iotail" / name), Facts(dir_ / "fio" / name)};
  }
};

TEST_F(RunFileLayoutTest, FilenameFormatNamesFilesAsFio) {
  // $jobnum is the clone, $filenum the file, in any case; a $word fio does not know stays.
  const std::string args =
      "--ioengine=psync --size=8k --rw=read --name=x --numjobs=2 --nrfiles=2 "
      "--filename_format='f.$JOBNUM.$filenum-$jobname' --name=y "
      "--filename_format='d/$jobname.cost$5'";
  const CommandResult ours = Run("iotail", args);
  ASSERT_EQ(ours.status, 0) << ours.err;
  const std::set<std::string> expected = {"f.0.0-x", "f.0.1-x", "f.1.0-x", "f.1.1-x", "d/y.cost$5"};
  EXPECT_EQ(Names("iotail"), expected);
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  ASSERT_EQ(Run("fio", args).status, 0);
  EXPECT_EQ(Names("fio"), expected);
}

TEST_F(RunFileLayoutTest, AJobThatOnlyWritesPreallocatesByFallocateAsFio) {
  // 64 KiB written into a 1 MiB region: the rest of the file is as --fallocate made it, never
  // written (iotail wrote it all with zeros first).
  struct Case {
    std::string fallocate;
    uint64_t size;
  };
  for (const Case& c : {Case{"native", 1u << 20}, Case{"none", 64u << 10}, Case{"keep", 64u << 10},
                        Case{"truncate", 1u << 20}, Case{"posix", 1u << 20}}) {
    SCOPED_TRACE(c.fallocate);
    const std::string name = "w." + c.fallocate;
    const std::string args =
        "--ioengine=psync --name=w --filename=" + name +
        " --rw=write --bs=4k --size=1m --io_size=64k --fallocate=" + c.fallocate;
    const CommandResult ours = Run("iotail", args);
    ASSERT_EQ(ours.status, 0) << ours.err;
    const FileFacts mine = Facts(dir_ / "iotail" / name);
    EXPECT_EQ(mine.size, c.size) << mine;
    if (c.fallocate == "truncate" || c.fallocate == "native") {
      EXPECT_EQ(mine.allocated, c.fallocate == "native") << mine;  // truncate: sparse
    }
    if (!HaveFio()) continue;
    ASSERT_EQ(Run("fio", args).status, 0);
    const FileFacts theirs = Facts(dir_ / "fio" / name);
    EXPECT_EQ(mine.size, theirs.size) << "iotail " << mine << "; fio " << theirs;
    EXPECT_EQ(mine.allocated, theirs.allocated) << "iotail " << mine << "; fio " << theirs;
    EXPECT_EQ(mine.zero_block, theirs.zero_block) << "iotail " << mine << "; fio " << theirs;
  }
}

TEST_F(RunFileLayoutTest, ReadJobsAndOverwriteLayFilesOutWithDataAsFio) {
  // A read job, and a write job with --overwrite=1: the whole file written with random data before
  // the job (no zero block anywhere), with any --fallocate.
  for (const std::string job : {"--rw=randread", "--rw=write --io_size=64k --overwrite=1"}) {
    SCOPED_TRACE(job);
    const std::string args =
        "--ioengine=psync --name=j --filename=f --bs=4k --size=256k --fallocate=none " + job;
    const CommandResult ours = Run("iotail", args);
    ASSERT_EQ(ours.status, 0) << ours.err;
    const FileFacts mine = Facts(dir_ / "iotail" / "f");
    EXPECT_EQ(mine.size, 256u << 10);
    EXPECT_FALSE(mine.zero_block) << mine;
    if (HaveFio()) {
      ASSERT_EQ(Run("fio", args).status, 0);
      const FileFacts theirs = Facts(dir_ / "fio" / "f");
      EXPECT_EQ(mine.size, theirs.size);
      EXPECT_EQ(mine.zero_block, theirs.zero_block) << "fio " << theirs;
    }
    fs::remove_all(dir_ / "iotail");
    fs::remove_all(dir_ / "fio");
  }
}

TEST_F(RunFileLayoutTest, AllowFileCreateZeroRefusesAMissingFileAsFio) {
  // fio: "file creation disallowed by allow_file_create=0"; iotail names the option and the file.
  const std::string args = "--name=r --filename=missing --rw=read --size=64k --allow_file_create=0";
  const CommandResult ours = Run("iotail", args);
  EXPECT_EQ(ours.status, 2) << ours.err;
  EXPECT_NE(ours.err.find("--allow_file_create=0: 'missing' does not exist"), std::string::npos)
      << ours.err;
  EXPECT_FALSE(fs::exists(dir_ / "iotail" / "missing"));
  // An existing file is used as it is.
  { std::ofstream(dir_ / "iotail" / "missing") << std::string(64 << 10, 'x'); }
  EXPECT_EQ(Run("iotail", args).status, 0);
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  EXPECT_NE(Run("fio", args).status, 0);
  EXPECT_FALSE(fs::exists(dir_ / "fio" / "missing"));
}

TEST_F(RunFileLayoutTest, RefillBuffersWritesNewDataEveryTimeAsFio) {
  // Depth 1: one buffer. Without refill_buffers every write carries the same data (iotail fills a
  // buffer once; fio's default scramble_buffers only stamps a few bytes); with it, no two alike.
  const std::string base =
      "--ioengine=psync --name=w --filename=f --rw=write --bs=4k --size=256k "
      "--fallocate=none ";
  const auto [ours, theirs] =
      HaveFio() ? Both(base + "--refill_buffers=1", "f") : std::pair{FileFacts{}, FileFacts{}};
  if (!HaveFio()) {
    ASSERT_EQ(Run("iotail", base + "--refill_buffers=1").status, 0);
    EXPECT_EQ(Facts(dir_ / "iotail" / "f").distinct_blocks, 64u);
    GTEST_SKIP() << "fio not installed (iotail checked alone)";
  }
  EXPECT_EQ(ours.distinct_blocks, 64u) << ours;
  EXPECT_EQ(theirs.distinct_blocks, 64u) << theirs;
  fs::remove_all(dir_ / "iotail");
  ASSERT_EQ(Run("iotail", base).status, 0);
  EXPECT_EQ(Facts(dir_ / "iotail" / "f").distinct_blocks, 1u);
}

// buffer_pattern: the writes (and a read job's layout) hold the pattern repeated, byte for byte
// as fio writes it.
TEST_F(RunFileLayoutTest, BufferPatternIsWrittenAsFio) {
  for (const std::string job : {"--rw=write --fallocate=none", "--rw=read"}) {
    SCOPED_TRACE(job);
    const std::string args =
        "--ioengine=psync --name=p --filename=f --bs=64k --size=256k "
        "--buffer_pattern='0xdeadbeef\"ok\"256' " +
        job;
    ASSERT_EQ(Run("iotail", args).status, 0);
    const std::string mine = iotail::testing::ReadFile(dir_ / "iotail" / "f");
    ASSERT_EQ(mine.size(), 256u << 10);
    EXPECT_EQ(mine.substr(0, 16),
              std::string("\xde\xad\xbe\xefok\x00\x01\xde\xad\xbe\xefok\x00\x01", 16));
    if (HaveFio()) {
      ASSERT_EQ(Run("fio", args).status, 0);
      EXPECT_TRUE(mine == iotail::testing::ReadFile(dir_ / "fio" / "f"));
    }
    fs::remove_all(dir_ / "iotail");
    fs::remove_all(dir_ / "fio");
  }
  EXPECT_EQ(Run("iotail", "--name=p --size=64k --buffer_pattern=0xzz").status, 2);
}

// buffer_compress_percentage=33 with 4 KiB chunks: each chunk 67% random, then 33% zeros (fio's
// fill_random_buf_percentage: 2,744 random bytes, 1,352 zeros), every block new (the buffers are
// refilled, as fio implies).
TEST_F(RunFileLayoutTest, CompressibleBuffersAreChunkedAsFio) {
  const std::string args =
      "--ioengine=psync --name=c --filename=f --rw=write --bs=64k --size=1m --fallocate=none "
      "--buffer_compress_percentage=33 --buffer_compress_chunk=4k";
  for (const char* tool : {"iotail", "fio"}) {
    if (std::string(tool) == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed";
    SCOPED_TRACE(tool);
    ASSERT_EQ(Run(tool, args).status, 0);
    const std::string data = iotail::testing::ReadFile(dir_ / tool / "f");
    ASSERT_EQ(data.size(), 1u << 20);
    std::set<std::string> blocks;
    for (size_t at = 0; at < data.size(); at += 4096) {
      const std::string block = data.substr(at, 4096);
      EXPECT_EQ(block.substr(2744), std::string(1352, '\0')) << at;
      EXPECT_NE(block.substr(2728, 16), std::string(16, '\0')) << at;  // random up to 2,744
      blocks.insert(block);
    }
    EXPECT_EQ(blocks.size(), 256u);
  }
}

// dedupe_percentage=50: about half the written blocks repeat earlier ones, so a 16 MiB file of
// 4,096 blocks holds about 2,048 distinct ones (fio 3.33: 2,030), in both dedupe modes (fio's
// working set is made of the first new buffers); 100: every block the same.
TEST_F(RunFileLayoutTest, DedupePercentageRepeatsThatShareOfBlocksAsFio) {
  const std::string base =
      "--ioengine=psync --name=d --filename=f --rw=write --bs=4k --size=16m --fallocate=none ";
  for (const std::string dedupe :
       {"--dedupe_percentage=50",
        "--dedupe_percentage=50 --dedupe_mode=working_set --dedupe_working_set_percentage=10"}) {
    for (const char* tool : {"iotail", "fio"}) {
      if (std::string(tool) == "fio" && !HaveFio()) continue;
      SCOPED_TRACE(std::string(tool) + " " + dedupe);
      ASSERT_EQ(Run(tool, base + dedupe).status, 0);
      const FileFacts f = Facts(dir_ / tool / "f");
      // Binomial: 2,048 +- 3 sigma (32).
      EXPECT_GT(f.distinct_blocks, 1950u) << f;
      EXPECT_LT(f.distinct_blocks, 2150u) << f;
      fs::remove_all(dir_ / tool);
    }
  }
  ASSERT_EQ(Run("iotail", base + "--dedupe_percentage=100").status, 0);
  EXPECT_EQ(Facts(dir_ / "iotail" / "f").distinct_blocks, 1u);
  EXPECT_EQ(Run("iotail", base + "--dedupe_percentage=101").status, 2);
}

}  // namespace run_file_layout_test
