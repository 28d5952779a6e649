// fio's e4defrag engine against fio 3.33 on the same jobs, on an ext4 filesystem of its own (an
// image in the scratch directory, mounted through a loop device: root only, skipped where mount is
// not permitted; always unmounted, which detaches the loop device). Each tool runs in a directory
// of its own on it: the same writes (each an EXT4_IOC_MOVE_EXT from the donor), the same bytes,
// the same error for a read, and the same blocks left in the file and the donor afterwards.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "fio_semantics_fixture.h"

namespace iotail::testing {
namespace run_e4defrag_test {

namespace fs = std::filesystem;

class E4defragTest : public FioSemanticsTest {
 protected:
  void SetUp() override {
    FioSemanticsTest::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "needs root to mount an ext4 image";
    if (!HaveFio()) GTEST_SKIP() << "fio not installed";
    const fs::path image = dir_ / "ext4.img";
    mount_ = dir_ / "mnt";
    fs::create_directories(mount_);
    if (Capture("truncate -s 96M " + image.string() + " && mkfs.ext4 -q -F " + image.string())
            .status != 0) {
      GTEST_SKIP() << "mkfs.ext4 failed (e2fsprogs missing?)";
    }
    const CommandResult m = Capture("mount -o loop " + image.string() + " " + mount_.string());
    if (m.status != 0) GTEST_SKIP() << "mount -o loop not permitted here: " << m.err;
    mounted_ = true;
    for (const char* tool : {"fio", "iotail"}) fs::create_directories(mount_ / tool);
  }
  void TearDown() override {
    if (mounted_) {
      EXPECT_EQ(Capture("umount " + mount_.string()).status, 0);
    }
    FioSemanticsTest::TearDown();
  }
  // Runs ARGS under each tool in its own directory on the filesystem; returns {fio, iotail}.
  std::pair<CommandResult, CommandResult> BothOnExt4(const std::string& args) {
    auto run = [&](const std::string& tool) {
      return Run(tool, "--directory=" + (mount_ / tool).string() + " " + args);
    };
    CommandResult fio = run("fio");
    CommandResult ours = run("iotail");
    return {fio, ours};
  }
  // The 512-byte blocks allocated to FILE in TOOL's directory.
  uint64_t Blocks(const std::string& tool, const std::string& file) {
    struct stat st {};
    EXPECT_EQ(stat((mount_ / tool / file).c_str(), &st), 0) << tool << "/" << file;
    return static_cast<uint64_t>(st.st_blocks);
  }
  // Runs ARGS under both tools, each of which must exit 0 with one job, and expects the same
  // writes, bytes and error; returns fio's job.
  Job SameWrites(const std::string& args) {
    const auto [fio, ours] = BothOnExt4(args);
    EXPECT_EQ(fio.status, 0) << fio.err;
    EXPECT_EQ(ours.status, 0) << ours.err;
    const std::vector<Job> f = Jobs(fio.out), o = Jobs(ours.out);
    if (f.size() != 1 || o.size() != 1) {
      ADD_FAILURE() << "one job each expected: fio " << f.size() << ", iotail " << o.size();
      return {};
    }
    EXPECT_EQ(o[0].writes, f[0].writes);
    EXPECT_EQ(o[0].write_bytes, f[0].write_bytes);
    EXPECT_EQ(o[0].error, f[0].error);
    return f[0];
  }
  fs::path mount_;
  bool mounted_ = false;
};

TEST_F(E4defragTest, WritesMoveTheDonorsBlocksAsFio) {
  // fio's examples/e4defrag.fio, scaled down: the donor preallocated once (inplace=0).
  const Job fio = SameWrites(
      "--name=defrag --ioengine=e4defrag --donorname=file.def --filename=file1 --filesize=8m "
      "--size=8m --bs=32k --rw=write --direct=1 --inplace=0");
  EXPECT_EQ(fio.error, 0);
  EXPECT_EQ(fio.writes, 256u);
  // The donor's 8 MiB moved into the file: both end as fio leaves them.
  for (const char* file : {"file1", "file.def"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(Blocks("iotail", file), Blocks("fio", file));
  }
}

TEST_F(E4defragTest, InplaceRandomWritesAllocateAndFreeTheDonorEachTimeAsFio) {
  SameWrites(
      "--name=fuzz --ioengine=e4defrag --donorname=file.def --filename=file --filesize=4m "
      "--size=4m --bs=4k --rw=randwrite --inplace=1");
  // Truncated to nothing after every move.
  EXPECT_EQ(Blocks("fio", "file.def"), 0u);
  EXPECT_EQ(Blocks("iotail", "file.def"), 0u);
  // Every block of the file was moved in (random order may add an extent-tree block or two, so
  // the counts of both tools are only compared with the data's 8192 sectors).
  EXPECT_GE(Blocks("fio", "file"), 8192u);
  EXPECT_GE(Blocks("iotail", "file"), 8192u);
  EXPECT_LT(Blocks("iotail", "file"), 8192u + 64);
}

TEST_F(E4defragTest, AReadFailsWithEinvalAsFio) {
  const auto [fio, ours] = BothOnExt4(
      "--name=r --ioengine=e4defrag --donorname=d --filename=f --size=1m --bs=64k --rw=read");
  const std::vector<Job> f = Jobs(fio.out), o = Jobs(ours.out);
  ASSERT_EQ(f.size(), 1u) << fio.err;
  ASSERT_EQ(o.size(), 1u) << ours.err;
  EXPECT_EQ(f[0].error, 22);
  EXPECT_EQ(o[0].error, f[0].error) << ours.err;
  EXPECT_NE(ours.status, 0);
}

TEST_F(E4defragTest, NoDonorIsAnErrorNamingTheOption) {
  const CommandResult r = RunIotail(
      "run --name=x --ioengine=e4defrag --filename=" + (mount_ / "iotail" / "f").string() +
          " --size=1m --rw=write",
      dir_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--donorname"), std::string::npos) << r.err;
}

}  // namespace run_e4defrag_test
}  // namespace iotail::testing
