// fio's file and directory operation engines in `iotail run` (filecreate, filestat, filedelete,
// dircreate, dirstat, dirdelete) with create_on_open, openfiles, unlink and stat_type: on the same
// jobs iotail and fio 3.33 time the same operations (one completion latency per file per pass, in
// the job's direction), count the same I/Os (which move nothing and have no latency), end with
// the same error, and leave the same files behind (names, types, sizes, permissions). fio 3.33
// has no directory engines (fio 3.34 added them): those are checked against what fio's later
// source does. Options iotail does not give fio's meaning with the other engines are refused.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace iotail::testing {
namespace run_fileop_test {

namespace fs = std::filesystem;
using nlohmann::json;

// What a run did, summed over its jobs: its first error, I/Os per direction, and completion
// latencies (the operations) per direction; lat and slat must have none.
struct Operations {
  int error = 0;
  uint64_t read_ios = 0, write_ios = 0, read_bytes = 0, write_bytes = 0;
  uint64_t read_ops = 0, write_ops = 0, slat_n = 0;
  bool operator==(const Operations&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Operations& o) {
  return os << "error " << o.error << "; reads " << o.read_ios << " (" << o.read_bytes
            << " B), writes " << o.write_ios << " (" << o.write_bytes << " B); operations timed "
            << o.read_ops << " as reads, " << o.write_ops << " as writes; slat " << o.slat_n;
}

Operations OperationsOf(const std::string& out) {
  Operations o;
  const size_t brace = out.find('{');
  if (brace == std::string::npos) return o;
  const json j = json::parse(out.substr(brace), nullptr, false);
  if (j.is_discarded()) return o;
  for (const json& job : j["jobs"]) {
    if (o.error == 0) o.error = job["error"].get<int>();
    o.read_ios += job["read"]["total_ios"].get<uint64_t>();
    o.write_ios += job["write"]["total_ios"].get<uint64_t>();
    o.read_bytes += job["read"]["io_bytes"].get<uint64_t>();
    o.write_bytes += job["write"]["io_bytes"].get<uint64_t>();
    o.read_ops += job["read"]["clat_ns"]["N"].get<uint64_t>();
    o.write_ops += job["write"]["clat_ns"]["N"].get<uint64_t>();
    o.slat_n += job["read"]["slat_ns"]["N"].get<uint64_t>();
    o.slat_n += job["write"]["slat_ns"]["N"].get<uint64_t>();
  }
  return o;
}

// What a tool left in its directory: "name type size mode" per entry, sorted (the test's own
// stderr file aside).
std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "stderr") continue;
    struct stat st {};
    if (lstat(e.path().c_str(), &st) != 0) continue;
    const bool is_dir = S_ISDIR(st.st_mode);
    out.push_back(name + (is_dir ? " dir " : " file ") + std::to_string(is_dir ? 0 : st.st_size) +
                  " " + std::to_string(st.st_mode & 07777));
  }
  std::sort(out.begin(), out.end());
  return out;
}

class RunFileOpTest : public FioSemanticsTest {
 protected:
  // Runs both tools on ARGS; they must agree on the operations, the I/Os, the error and what is
  // left behind. Returns iotail's counts.
  Operations ExpectSameAsFio(const std::string& args, int status = 0) {
    SCOPED_TRACE(args);
    const CommandResult ours = Run("iotail", args);
    EXPECT_EQ(ours.status, status) << ours.err;
    const Operations mine = OperationsOf(ours.out);
    EXPECT_EQ(mine.slat_n, 0u);
    if (!HaveFio()) return mine;
    const CommandResult fio = Run("fio", args);
    // fio exits 1 for a job that ended with an error, iotail 1 as well.
    EXPECT_EQ(fio.status, status) << fio.err;
    EXPECT_EQ(mine, OperationsOf(fio.out));
    EXPECT_EQ(Listing(dir_ / "iotail"), Listing(dir_ / "fio"));
    return mine;
  }
  Operations IotailAlone(const std::string& args, int status = 0) {
    SCOPED_TRACE(args);
    const CommandResult ours = Run("iotail", args);
    EXPECT_EQ(ours.status, status) << ours.err;
    return OperationsOf(ours.out);
  }
};

TEST_F(RunFileOpTest, FileCreateTimesEachOpenOnceAFileAsFio) {
  // fio's examples/filecreate-ioengine.fio, smaller: one open per file, one I/O per file.
  const Operations o = ExpectSameAsFio(
      "--create_on_open=1 --nrfiles=40 --ioengine=filecreate --fallocate=none --filesize=4k "
      "--openfiles=1 --name=t0 --name=t1");
  EXPECT_EQ(o.read_ops, 80u);
  EXPECT_EQ(o.read_ios, 80u);
  EXPECT_EQ(Listing(dir_ / "iotail").size(), 80u);
  EXPECT_EQ(Listing(dir_ / "iotail").front(), "t0.0.0 file 0 384");  // empty, 0600
}

TEST_F(RunFileOpTest, FileCreateCountsBlocksAsIosAndLoopsAsOpens) {
  // Two blocks a file: two I/Os, one open; writes time the open as a write; each loop opens again.
  const Operations o = ExpectSameAsFio(
      "--name=t --ioengine=filecreate --nrfiles=5 --filesize=8k --bs=4k --rw=write --loops=3 "
      "--numjobs=2");
  EXPECT_EQ(o.write_ops, 30u);
  EXPECT_EQ(o.write_ios, 60u);
  EXPECT_EQ(o.read_ops, 0u);
  // rw mixes: the operations count as reads (fio: reads when the job reads at all); which I/Os
  // are reads is random (so not fio's, I/O by I/O).
  fs::remove_all(dir_ / "iotail");
  const Operations mixed =
      IotailAlone("--name=t --ioengine=filecreate --nrfiles=4 --filesize=4k --rw=rw");
  EXPECT_EQ(mixed.read_ops, 4u);
  EXPECT_EQ(mixed.write_ops, 0u);
  EXPECT_EQ(mixed.read_ios + mixed.write_ios, 4u);
}

TEST_F(RunFileOpTest, FileCreateWithoutSizeDoesOneBlockAFile) {
  const Operations o = ExpectSameAsFio("--name=t --ioengine=filecreate --nrfiles=3");
  EXPECT_EQ(o.read_ios, 3u);
}

TEST_F(RunFileOpTest, FileStatStatsLaidOutFilesAsFio) {
  // fio's examples/filestat-ioengine.fio, smaller: the files are laid out before the run.
  for (const std::string type : {"stat", "lstat", "statx"}) {
    fs::remove_all(dir_ / "iotail");
    fs::remove_all(dir_ / "fio");
    const Operations o = ExpectSameAsFio("--ioengine=filestat --stat_type=" + type +
                                         " --filesize=4k --nrfiles=20 --thread --name=t0 "
                                         "--name=t1");
    EXPECT_EQ(o.read_ops, 40u) << type;
  }
  EXPECT_EQ(Listing(dir_ / "iotail").front(), "t0.0.0 file 4096 420");  // laid out, 0644
}

TEST_F(RunFileOpTest, FileStatWithCreateOnOpenFindsNoFile) {
  // Nothing laid out: the first stat fails (ENOENT), the job's error, no I/O.
  const Operations o = ExpectSameAsFio(
      "--name=t --ioengine=filestat --create_on_open=1 --nrfiles=2 --filesize=4k", 1);
  EXPECT_EQ(o.error, ENOENT);
  EXPECT_EQ(o.read_ios, 0u);
}

TEST_F(RunFileOpTest, FileDeleteUnlinksEveryFileAsFio) {
  const Operations o = ExpectSameAsFio(
      "--ioengine=filedelete --filesize=4k --nrfiles=30 --unlink=0 --name=t0 --name=t1");
  EXPECT_EQ(o.read_ops, 60u);
  EXPECT_TRUE(Listing(dir_ / "iotail").empty());
  // A second loop finds the files gone: ENOENT ends the job after the first.
  const Operations again = ExpectSameAsFio(
      "--name=t --ioengine=filedelete --filesize=4k --nrfiles=5 --loops=2 --rw=write", 1);
  EXPECT_EQ(again.error, ENOENT);
  EXPECT_EQ(again.write_ios, 5u);
  EXPECT_EQ(again.write_ops, 5u);
}

TEST_F(RunFileOpTest, UnlinkRemovesTheJobsFilesAsFio) {
  ExpectSameAsFio("--name=t --ioengine=filecreate --nrfiles=4 --filesize=4k --unlink=1");
  EXPECT_TRUE(Listing(dir_ / "iotail").empty());
  ExpectSameAsFio("--name=t --ioengine=filestat --nrfiles=4 --filesize=4k --unlink=1");
  EXPECT_TRUE(Listing(dir_ / "iotail").empty());
  // Any engine's files: psync's too.
  ExpectSameAsFio("--name=t --rw=write --nrfiles=2 --size=64k --unlink=1");
  EXPECT_TRUE(Listing(dir_ / "iotail").empty());
}

TEST_F(RunFileOpTest, TimeBasedOperatesOnceAPass) {
  // One block a file: every I/O begins a pass over its file, so each is an operation (as fio's
  // 221,900 opens for 221,900 I/Os in a second).
  const Operations o = IotailAlone(
      "--name=t --ioengine=filestat --nrfiles=3 --filesize=4k --time_based --runtime=300ms");
  EXPECT_GT(o.read_ios, 3u);
  EXPECT_EQ(o.read_ops, o.read_ios);
}

TEST_F(RunFileOpTest, DirectoryEnginesDoWhatFiosDo) {
  // fio 3.33 has no directory engines; fio 3.34's (engines/fileoperations.c; the counts here are
  // those of fio 3.42 built from source on the same jobs): dircreate's
  // mkdir(path, S_IFDIR) leaves directories without permission bits, dirstat and dirdelete make
  // theirs (0700) before the run, dirdelete's rmdir leaves nothing.
  const fs::path d = dir_ / "iotail";
  Operations o = IotailAlone(
      "--create_on_open=1 --nrfiles=6 --ioengine=dircreate --fallocate=none --filesize=4k "
      "--openfiles=1 --name=t0 --name=t1");
  EXPECT_EQ(o.read_ops, 12u);
  EXPECT_EQ(o.read_ios, 12u);
  ASSERT_EQ(Listing(d).size(), 12u);
  EXPECT_EQ(Listing(d).front(), "t0.0.0 dir 0 0");
  // A second loop: mkdir fails with EEXIST, after the first loop's 6.
  fs::remove_all(d);
  o = IotailAlone("--name=t0 --ioengine=dircreate --nrfiles=6 --filesize=4k --loops=2", 1);
  EXPECT_EQ(o.error, EEXIST);
  EXPECT_EQ(o.read_ops, 6u);
  EXPECT_EQ(o.read_ios, 6u);
  // Without a size: one block a directory (dirstat and dirdelete need one).
  fs::remove_all(d);
  o = IotailAlone("--name=t0 --ioengine=dircreate --nrfiles=3 --unlink=1");
  EXPECT_EQ(o.read_ios, 3u);
  EXPECT_TRUE(Listing(d).empty());
  IotailAlone("--name=t0 --ioengine=dirdelete --nrfiles=3", 2);

  fs::remove_all(d);
  o = IotailAlone("--ioengine=dirstat --numjobs=3 --filesize=4k --nrfiles=5 --thread --name=t0");
  EXPECT_EQ(o.read_ops, 15u);
  ASSERT_EQ(Listing(d).size(), 15u);
  EXPECT_EQ(Listing(d).front(), "t0.0.0 dir 0 448");  // 0700
  o = IotailAlone(
      "--ioengine=dirstat --stat_type=statx --filesize=4k --nrfiles=5 --name=t0 "
      "--unlink=1");
  EXPECT_EQ(o.read_ops, 5u);
  EXPECT_EQ(Listing(d).size(), 10u);  // t0.0.* removed, t0.1.* and t0.2.* kept

  fs::remove_all(d);
  o = IotailAlone(
      "--ioengine=dirdelete --filesize=4k --nrfiles=20 --unlink=0 --rw=write --name=t0 "
      "--name=t1");
  EXPECT_EQ(o.write_ops, 40u);
  EXPECT_EQ(o.write_ios, 40u);
  EXPECT_TRUE(Listing(d).empty());
  o = IotailAlone("--ioengine=dirdelete --filesize=4k --nrfiles=5 --loops=2 --name=t0", 1);
  EXPECT_EQ(o.error, ENOENT);
  EXPECT_EQ(o.read_ops, 5u);
}

TEST_F(RunFileOpTest, OpenOptionsOtherEnginesCannotHonourAreRefused) {
  const std::string target = " --name=t --size=64k --nrfiles=2";
  fs::create_directories(dir_ / "iotail");
  // (create_on_open=1 is taken by every engine: tests/cli/run_create_on_open_test.cc.)
  ExpectRefused(
      {{"--openfiles=1" + target, "--openfiles=1: iotail keeps every file of a clone"},
       {"--stat_type=lstat" + target, "--stat_type: only with --ioengine=filestat or dirstat"},
       {"--ioengine=filecreate --rw=trim" + target, "--rw: no trims"}},
      dir_ / "iotail");
  // What means the same in iotail as in fio is taken: create_on_open=0, openfiles >= the files.
  ExpectSameCounts("--name=t --rw=write --nrfiles=2 --size=64k --create_on_open=0 --openfiles=2");
}

}  // namespace run_fileop_test
}  // namespace iotail::testing
