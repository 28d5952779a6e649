// `iotail run` against fio 3.33 on fio's verify leftovers (issue 24): verify_pattern (the bytes on
// disk are fio's, byte for byte, where they are pattern), verify=pattern and verify=meta with a
// pattern and a verify_interval (a corruption found at the same offset, with the same kind of
// message; a clean run passes with the same counts), verify_async (fio's threads: the same counts
// on clean blocks, the same failure on a bad one), error_dump (fio's line per failed I/O) and
// fill_device (written until the filesystem is full, on a small tmpfs of each tool's own: needs
// root, skips otherwise).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace run_verify_pattern_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::FioSemanticsTest;
using iotail::testing::HaveFio;
using iotail::testing::Job;
using iotail::testing::Jobs;

std::string Bytes(const fs::path& p) { return iotail::testing::ReadFile(p); }

void Corrupt(const fs::path& p, uint64_t at, const std::string& with) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(with.data(), static_cast<std::streamsize>(with.size()));
}

// The offset a failed check names: fio's "verify failed at file F offset N" or "bad ... at file F
// offset N", iotail's "failed at offset N of file".
uint64_t FailedOffset(const std::string& err) {
  std::smatch m;
  if (std::regex_search(err, m, std::regex(R"(at file \S+ offset (\d+))")) ||
      std::regex_search(err, m, std::regex(R"(failed at offset (\d+))"))) {
    return std::stoull(m[1]);
  }
  return UINT64_MAX;
}

// verify=pattern writes only the pattern: the files fio and iotail write are the same bytes, %o
// (each block's offset) included.
TEST_F(FioSemanticsTest, VerifyPatternBytesOnDiskAreFios) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  for (const std::string pattern : {"0xaa555aa5", "%o\\\"abc\\\"0x01", "-1024\\\"xyz\\\""}) {
    SCOPED_TRACE(pattern);
    const std::string args =
        "--name=w --ioengine=psync --filename=f --rw=write --bs=4k --size=256k --verify=pattern "
        "--verify_pattern=\"" +
        pattern + "\"";
    ExpectSameCounts(args);
    const std::string a = Bytes(dir_ / "fio" / "f"), b = Bytes(dir_ / "iotail" / "f");
    ASSERT_EQ(a.size(), 256u << 10);
    EXPECT_TRUE(a == b) << "the files differ";
  }
}

// verify=meta with a pattern and verify_interval=512 (surface-scan.fio's): each 512-byte interval
// is a header (each tool's own: fio's is 40 bytes, iotail's 48) over the pattern, which is fio's
// byte for byte past the headers; the read-back of a clean file passes in both with the same
// counts.
TEST_F(FioSemanticsTest, MetaWithPatternAndIntervalsAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string common =
      "--ioengine=psync --filename=f --bs=64k --size=1m --verify=meta --verify_pattern=0xaa555aa5 "
      "--verify_interval=512 ";
  ExpectSameCounts("--name=w --rw=write --do_verify=0 " + common);
  const std::string a = Bytes(dir_ / "fio" / "f"), b = Bytes(dir_ / "iotail" / "f");
  ASSERT_EQ(a.size(), b.size());
  for (size_t at = 0; at < a.size(); at += 512) {
    ASSERT_EQ(a.compare(at + 48, 512 - 48, b, at + 48, 512 - 48), 0) << "interval at " << at;
  }
  ExpectSameCounts("--name=r --rw=read " + common);
  ExpectSameCounts("--name=wv --rw=write " + common);  // written, then read back and checked
}

// A byte changed in the pattern, and a header broken: both tools fail the read-back at the same
// offset (the interval's), with a pattern message for the first and a header one for the second,
// and stop there with EILSEQ after the same reads. (verify_fatal=1: without it fio 3.33 goes on
// through the block's other intervals and keeps only the last verdict, so a bad interval before a
// good one is printed but the job's error is 0; iotail always stops at the first.)
TEST_F(FioSemanticsTest, CorruptionIsFoundWhereFioFindsIt) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string common =
      "--ioengine=psync --filename=f --bs=64k --size=1m --verify=meta --verify_pattern=0xaa555aa5 "
      "--verify_interval=512 ";
  struct Case {
    uint64_t at;
    const char* fio_kind;
    const char* iotail_kind;
  };
  for (const Case c : {Case{3 * 65536 + 5 * 512 + 300, "pattern: verify failed", "pattern:"},
                       Case{7 * 65536 + 9 * 512 + 1, "verify: bad magic header", "bad magic"}}) {
    SCOPED_TRACE(c.at);
    std::vector<Job> jobs[2];
    int k = 0;
    for (const std::string tool : {"fio", "iotail"}) {
      ASSERT_EQ(Run(tool, "--name=w --rw=write --do_verify=0 " + common).status, 0);
      Corrupt(dir_ / tool / "f", c.at, "\x13");
      const CommandResult r = Run(tool, "--name=r --rw=read --verify_fatal=1 " + common);
      EXPECT_EQ(FailedOffset(r.err), c.at / 512 * 512) << tool << ": " << r.err;
      EXPECT_NE(r.err.find(tool == "fio" ? c.fio_kind : c.iotail_kind), std::string::npos)
          << tool << ": " << r.err;
      jobs[k] = Jobs(r.out);
      for (Job& j : jobs[k]) j.runtime_ms = 0;
      ASSERT_EQ(jobs[k].size(), 1u) << r.out;
      EXPECT_EQ(jobs[k][0].error, EILSEQ);
      ++k;
    }
    EXPECT_EQ(jobs[1], jobs[0]);
  }
}

// verify_async: on clean blocks fio's verification threads change nothing (the same counts as
// iotail's inline check). On a bad block both tools fail at its offset with EILSEQ; fio's main
// thread runs on until its thread reports, a timing-dependent number of I/Os (11 to 26 reads seen
// at depth 1), never fewer than its inline check; iotail stops as fio's inline check (and as fio's
// thread when it reports at once): at depth 1 the same count; at depth 8 within the depth.
TEST_F(FioSemanticsTest, VerifyAsyncCountsAsFioOnABadBlock) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  ExpectSameCounts(
      "--name=wv --filename=c --rw=write --bs=4k --size=1m --verify=crc32c "
      "--verify_async=2 --ioengine=libaio --iodepth=8");
  for (const std::string depth : {"--ioengine=psync", "--ioengine=libaio --iodepth=8"}) {
    SCOPED_TRACE(depth);
    std::vector<Job> seen[3];
    int k = 0;
    for (const std::string run : {"fio", "fio-async", "iotail"}) {
      const std::string tool = run == "iotail" ? "iotail" : "fio";
      ASSERT_EQ(Run(tool,
                    "--name=w --filename=f --rw=write --bs=4k --size=1m --verify=crc32c "
                    "--do_verify=0")
                    .status,
                0);
      Corrupt(dir_ / tool / "f", 10 * 4096 + 100, "XXXX");
      const CommandResult r =
          Run(tool, "--name=r --filename=f --rw=read --bs=4k --size=1m --verify=crc32c " + depth +
                        (run == "fio" ? "" : " --verify_async=2"));
      EXPECT_NE(r.status, 0) << run;
      EXPECT_EQ(FailedOffset(r.err), 40960u) << run << ": " << r.err;
      seen[k] = Jobs(r.out);
      ASSERT_EQ(seen[k].size(), 1u) << r.out;
      seen[k][0].runtime_ms = 0;
      EXPECT_EQ(seen[k][0].error, EILSEQ) << run;
      ++k;
    }
    EXPECT_GE(seen[1][0].reads, seen[0][0].reads);  // fio's thread reports no sooner
    if (depth == "--ioengine=psync") {
      EXPECT_EQ(seen[2], seen[0]);
    } else {
      EXPECT_GE(seen[2][0].reads, 11u);
      EXPECT_LE(seen[2][0].reads, 11u + 8);
    }
  }
}

// A tmpfs of `bytes` at `dir` (root only); unmounted by the returned guard.
struct Tmpfs {
  fs::path dir;
  bool ok = false;
  Tmpfs(fs::path d, uint64_t bytes) : dir(std::move(d)) {
    fs::create_directories(dir);
    ok = geteuid() == 0 &&
         mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + std::to_string(bytes)).c_str()) == 0;
  }
  ~Tmpfs() {
    if (ok) umount2(dir.c_str(), MNT_DETACH);
  }
};

// fill_device: a sequential write runs until the filesystem is full, and that is no error; the
// file fills the 8 MiB tmpfs in both tools (a tmpfs of each tool's own, mounted under its
// directory). Then surface-scan.fio's two phases (write until full without a read-back, then read
// it all back and check the pattern) pass in both with the same bytes. (fio's total_ios also
// counts the short last write and its failed remainder: iotail counts completed I/Os.)
TEST_F(FioSemanticsTest, FillDeviceWritesUntilTheFilesystemIsFull) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  std::vector<Job> scans[2];
  int k = 0;
  for (const std::string tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    Tmpfs t(dir_ / tool / "fs", 8 << 20);
    if (!t.ok) GTEST_SKIP() << "needs root to mount a tmpfs";
    CommandResult r = Run(tool,
                          "--name=fill --ioengine=psync --filename=fs/f --rw=write --bs=64k "
                          "--fill_device=1");
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<Job> jobs = Jobs(r.out);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].error, 0);
    EXPECT_EQ(jobs[0].write_bytes, 8u << 20);
    EXPECT_EQ(fs::file_size(dir_ / tool / "fs" / "f"), 8u << 20);
    fs::remove(dir_ / tool / "fs" / "f");
    std::ofstream(dir_ / tool / "scan.fio")
        << "[global]\nthread\nbs=64k\ndirect=1\nioengine=sync\nverify=meta\n"
           "verify_pattern=0xaa555aa5\nverify_interval=512\n"
           "[write-phase]\nfilename=fs/datafile.tmp\nrw=write\nfill_device=1\ndo_verify=0\n"
           "[verify-phase]\nstonewall\ncreate_serialize=0\nfilename=fs/datafile.tmp\nrw=read\n"
           "do_verify=1\n";
    r = Run(tool, "scan.fio");
    EXPECT_EQ(r.status, 0) << r.err;
    scans[k] = Jobs(r.out);
    ASSERT_EQ(scans[k].size(), 2u);
    EXPECT_EQ(scans[k][1].read_bytes, 8u << 20);
    EXPECT_EQ(scans[k][1].error, 0);
    for (Job& j : scans[k]) j.runtime_ms = j.writes = 0;
    ++k;
  }
  EXPECT_EQ(scans[1], scans[0]);
}

// error_dump: fio's line for each failed I/O (file, error, direction, offset, length); by default
// (0) only the one that ends the job; ENOSPC on a full 1 MiB tmpfs.
TEST_F(FioSemanticsTest, ErrorDumpPrintsEachFailedIoAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::regex line(
      R"((I/O|io_u) error on file fs/f: No space left on device: write offset=(\d+), buflen=4096)");
  auto offsets = [&](const std::string& err) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator();
         ++it) {
      out.push_back((*it)[2]);
    }
    return out;
  };
  const std::vector<std::string> last4 = {"1048576", "1052672", "1056768", "1060864"};
  for (const std::string tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    Tmpfs t(dir_ / tool / "fs", 1 << 20);
    if (!t.ok) GTEST_SKIP() << "needs root to mount a tmpfs";
    const std::string job =
        "--name=e --ioengine=psync --filename=fs/f --rw=write --bs=4k "
        "--size=1040k --fallocate=none ";
    const std::string keep_going = "--continue_on_error=write --ignore_error=,ENOSPC ";
    CommandResult r = Run(tool, job + keep_going + "--error_dump=1");
    EXPECT_EQ(offsets(r.err), last4) << r.err;  // 1 MiB fits: the last 16 KiB fail
    fs::remove(dir_ / tool / "fs" / "f");
    r = Run(tool, job + keep_going);
    EXPECT_TRUE(offsets(r.err).empty()) << r.err;
    fs::remove(dir_ / tool / "fs" / "f");
    r = Run(tool, job);
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(offsets(r.err), std::vector<std::string>{"1048576"}) << r.err;  // the fatal one
    fs::remove(dir_ / tool / "fs" / "f");
  }
}

}  // namespace run_verify_pattern_test
