// Damaged histogram logs given to `iotail pctiles` and `iotail merge`: each gets a clear message
// naming file:line and exit status 2, never a crash; a missing file exits 1 naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"

namespace malformed_input_test {

namespace fs = std::filesystem;

std::string Line(const std::string& time, const std::string& ddir, size_t columns = 1856,
                 const std::string& bucket7 = "0") {
  std::string line = time + ", " + ddir + ", 4096";
  for (size_t i = 0; i < columns; ++i) line += ", " + (i == 7 ? bucket7 : std::string("0"));
  return line + "\n";
}

class MalformedInputTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_malformed"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& data) {
    const fs::path path = dir_ / "bad.log";
    std::ofstream(path, std::ios::binary) << data;
    return path.string();
  }

  // Runs the command and returns its exit status; stderr goes to err_.
  int Run(const std::string& args) {
    const auto result = iotail::testing::RunIotail(args, dir_);
    err_ = result.err;
    return result.status;
  }

  // Both commands reject the file with exit 2 and a message naming file:line and `what`.
  void ExpectRejected(const std::string& data, int line, const std::string& what) {
    const std::string path = Write(data);
    for (const std::string& command : {std::string("pctiles"), std::string("pctiles --format json"),
                                       "merge -o " + (dir_ / "out.log").string()}) {
      SCOPED_TRACE(command);
      EXPECT_EQ(Run(command + " " + path), 2) << err_;
      EXPECT_NE(err_.find(path + ":" + std::to_string(line) + ":"), std::string::npos) << err_;
      EXPECT_NE(err_.find(what), std::string::npos) << err_;
      EXPECT_EQ(err_.find("Sanitizer"), std::string::npos) << err_;
    }
  }

  fs::path dir_;
  std::string err_;
};

TEST_F(MalformedInputTest, WrongFieldCount) {
  std::string bad = Line("500", "0");
  bad.insert(bad.size() - 1, ", 0");
  ExpectRejected(Line("250", "0") + bad, 2, "1860 fields");
  ExpectRejected(Line("250", "0", 100), 1, "103 fields");
}

TEST_F(MalformedInputTest, NonNumber) {
  ExpectRejected(Line("250", "0") + Line("500", "0", 1856, "12abc"), 2, "12abc");
  ExpectRejected(Line("soon", "0"), 1, "soon");
}

TEST_F(MalformedInputTest, NegativeValue) {
  ExpectRejected(Line("250", "0") + Line("500", "1") + Line("750", "0", 1856, "-3"), 3, "negative");
}

TEST_F(MalformedInputTest, CompressedLogGarbage) {
  ExpectRejected("104, 94106378796208, 0, 4096, 0\n105, 94106378796208, 0, 4096, 0\n", 1,
                 "log_compression");
}

TEST_F(MalformedInputTest, DdirSeven) {
  ExpectRejected(Line("250", "0") + Line("250", "7"), 2, "ddir 7");
}

TEST_F(MalformedInputTest, HugeNumber) {
  ExpectRejected(Line("250", "0", 1856, "99999999999999999999999"), 1, "out of range");
}

TEST_F(MalformedInputTest, CountsBeyondWhatAnIntervalHoldsAreDamage) {
  // One count near 2^64, and many large counts that add up past 10^15 in one line.
  ExpectRejected(Line("250", "0") + Line("500", "0", 1856, "18446744073709551615"), 2,
                 "more than 1000000000000000 I/Os in one interval");
  std::string many = "250, 0, 4096";
  for (int i = 0; i < 1856; ++i) many += i < 1100 ? ", 999999999999" : ", 0";
  ExpectRejected(Line("250", "1") + many + "\n", 2, "the log is damaged");
  // 10^15 in all is still a log.
  const std::string path = Write(Line("250", "0", 1856, "1000000000000000"));
  EXPECT_EQ(Run("pctiles " + path), 0) << err_;
}

TEST_F(MalformedInputTest, BinaryGarbage) {
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 1103515245 + 12345;
    garbage += static_cast<char>(x >> 24);
  }
  garbage[100] = '\n';
  const std::string path = Write(garbage);
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "out.log").string()}) {
    const int status = Run(command + " " + path);
    EXPECT_EQ(status, 2) << err_;
    EXPECT_NE(err_.find(path + ":"), std::string::npos) << err_;
  }
}

TEST_F(MalformedInputTest, CompressedFileIsNamedAsSuch) {
  // A real gzip of a real log (named NAME.log.gz, not taken for fio --client's NAME.log.HOST),
  // and an xz magic number: said compressed, with the command that undoes it.
  const fs::path log = dir_ / "job_clat_hist.1.log";
  fs::copy_file(fs::path(IOTAIL_TEST_DATA_DIR) / "fio" / "basic" / "hist_clat_hist.1.log", log);
  ASSERT_EQ(iotail::testing::RunShell("gzip -k " + log.string(), dir_).status, 0);
  const std::string gz = log.string() + ".gz";
  ExpectRejected(std::string("\xfd") + "7zXZ\n", 1, "the file is compressed (xz)");
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "out.log").string(),
        "plot -o " + (dir_ / "out.html").string()}) {
    SCOPED_TRACE(command);
    EXPECT_EQ(Run(command + " " + gz), 2) << err_;
    EXPECT_NE(err_.find(gz + ":1: the file is compressed (gzip)"), std::string::npos) << err_;
    EXPECT_NE(err_.find("gunzip -k " + gz), std::string::npos) << err_;
    EXPECT_EQ(err_.find("fio --client"), std::string::npos) << err_;
  }
}

TEST_F(MalformedInputTest, StandardInputIsSaidNotRead) {
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "out.log").string()}) {
    SCOPED_TRACE(command);
    const auto result = iotail::testing::RunShell(
        "timeout 20 " + std::string(IOTAIL_BINARY) + " " + command + " - < /dev/null", dir_);
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_NE(result.err.find("'-': standard input is not read"), std::string::npos) << result.err;
  }
}

TEST_F(MalformedInputTest, MissingFileExitsOneNamingIt) {
  const std::string missing = (dir_ / "no-such.log").string();
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "out.log").string()}) {
    EXPECT_EQ(Run(command + " " + missing), 1) << err_;
    EXPECT_NE(err_.find(missing), std::string::npos) << err_;
  }
}

TEST_F(MalformedInputTest, PipeIsRejectedNotWaitedOn) {
  // A pipe cannot be read twice (scan, then sources): rejected up front, not hung on.
  const std::string fifo = (dir_ / "pipe.log").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "out.log").string()}) {
    const auto result = iotail::testing::RunShell(
        "timeout 20 " + std::string(IOTAIL_BINARY) + " " + command + " " + fifo, dir_);
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_NE(result.err.find(fifo), std::string::npos) << result.err;
  }
}

TEST_F(MalformedInputTest, TimeBeyondTheRangeIsRejected) {
  ExpectRejected(Line("250", "0") + Line("9223372036854775000", "0"), 2, "time jumps forward");
  ExpectRejected(Line("9223372036854775000", "0"), 1, "out of range");
}

TEST_F(MalformedInputTest, CorruptedEpochDigitIsRejectedAtOnce) {
  // One digit of an epoch time damaged (1795408932000 -> 9795408932000): once, this made pctiles
  // walk empty quanta without end.
  std::string data;
  for (int i = 0; i < 4; ++i) data += Line(std::to_string(1795408930000 + i * 500), "0", 1856, "3");
  data += Line("9795408932000", "0", 1856, "3") + Line("1795408932500", "0", 1856, "3");
  const auto start = std::chrono::steady_clock::now();
  ExpectRejected(data, 5, "time jumps forward");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(MalformedInputTest, EpochTimeFallingBeforeTheLogBeganIsRejected) {
  // Back by 50 s in one line, to before the first record: damage, not a second job.
  std::string data;
  for (int i = 0; i < 4; ++i) data += Line(std::to_string(1795408930000 + i * 500), "0", 1856, "3");
  data += Line("1795408880000", "0", 1856, "3");
  ExpectRejected(data, 5, "before the log's first record");
  // A second job of a per_job_logs=0 file starts where the first did: accepted.
  std::string jobs = data.substr(0, data.rfind(Line("1795408880000", "0", 1856, "3")));
  jobs += jobs;
  EXPECT_EQ(Run("pctiles " + Write(jobs)), 0) << err_;
}

TEST_F(MalformedInputTest, LineLongerThanAnyLogIsRejected) {
  ExpectRejected(std::string(3 << 20, '7') + "\n", 1, "longer than 1 MiB");
}

TEST_F(MalformedInputTest, DevicesAreNotLogs) {
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "o.log").string()}) {
    SCOPED_TRACE(command);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(Run(command + " /dev/urandom"), 2) << err_;
    EXPECT_NE(err_.find("not a regular file"), std::string::npos) << err_;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
}

TEST_F(MalformedInputTest, SameFileTwiceIsRejected) {
  const std::string path = Write(Line("250", "0", 1856, "5"));
  const std::string other = (dir_ / "." / "bad.log").string();
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "out.log").string()}) {
    EXPECT_EQ(Run(command + " " + path + " " + other), 2) << err_;
    EXPECT_NE(err_.find("same file"), std::string::npos) << err_;
  }
}

TEST_F(MalformedInputTest, MergeRefusesToOverwriteAnInput) {
  const std::string data = Line("250", "0", 1856, "5");
  const std::string path = Write(data);
  EXPECT_EQ(Run("merge -o " + path + " " + path), 2) << err_;
  EXPECT_NE(err_.find("also an input"), std::string::npos) << err_;
  std::ifstream in(path);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, data);
}

TEST_F(MalformedInputTest, MergeWritesWholeOrNotAtAll) {
  // A damaged line near the end of the input: the existing output stays as it was, and no partial
  // log or temporary file is left.
  const fs::path out = dir_ / "good.log";
  std::ofstream(out) << "previous merge\n";
  std::string data;
  for (int i = 1; i <= 20; ++i) data += Line(std::to_string(i * 250), "0", 1856, "5");
  data += "5500, 0, 4096, damaged\n";
  EXPECT_EQ(Run("merge -o " + out.string() + " " + Write(data)), 2) << err_;
  std::ifstream in(out);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "previous merge\n");
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
  // A device is never an output.
  EXPECT_NE(Run("merge -o /dev/null " + Write(Line("250", "0", 1856, "5"))), 0);
  EXPECT_NE(err_.find("not a regular file"), std::string::npos) << err_;
}

TEST_F(MalformedInputTest, TornLastLineIsAWarningNotAnError) {
  std::string torn = Line("750", "0");
  torn.resize(200);
  const std::string path = Write(Line("250", "0", 1856, "5") + Line("500", "0") + torn);
  for (const std::string& command :
       {std::string("pctiles"), "merge -o " + (dir_ / "out.log").string()}) {
    EXPECT_EQ(Run(command + " " + path), 0) << err_;
    EXPECT_NE(err_.find("warning"), std::string::npos) << err_;
    EXPECT_NE(err_.find(path + ":3"), std::string::npos) << err_;
  }
}

TEST_F(MalformedInputTest, EmptyFileIsAWarning) {
  const std::string path = Write("");
  EXPECT_EQ(Run("pctiles " + path), 0) << err_;
  EXPECT_NE(err_.find("no histogram records"), std::string::npos) << err_;
}

// `iotail run` messages that said too little or the wrong thing (issue 25): each names the option
// and the real reason, before anything runs.
TEST_F(MalformedInputTest, RunMessagesSayTheRealReason) {
  const std::string target = " --name=x --filename=" + (dir_ / "t").string();
  // 2^64 - 1 is the largest size, not too large.
  EXPECT_EQ(Run("run --parse-only" + target + " --size=18446744073709551615"), 0) << err_;
  EXPECT_EQ(Run("run --parse-only" + target + " --size=18446744073709551616"), 2) << err_;
  // An --output where no file can be made is refused at the start, saying so.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Run("run" + target + " --size=1m --runtime=5 --time_based --output=/proc/version"), 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 4.0);
  EXPECT_NE(err_.find("--output: '/proc/version': no file can be created beside it"),
            std::string::npos)
      << err_;
  // io_uring's ring limit, named.
  const int rc = Run("run" + target + " --size=1m --ioengine=io_uring --iodepth=32769 --runtime=1");
  if (err_.find("not available") == std::string::npos) {
    EXPECT_EQ(rc, 2) << err_;
    EXPECT_NE(err_.find("--iodepth=32769: above io_uring's limit of 32768"), std::string::npos)
        << err_;
  }
}

// fio's limit of 4,096 jobs counts the clones (REAL_MAX_JOBS); 5,000 sections took 3.25 GB before.
TEST_F(MalformedInputTest, AtMost4096JobsWithTheirClones) {
  const std::string job = " --ioengine=null --size=1m";
  EXPECT_EQ(Run("run --parse-only --name=a --numjobs=4000" + job + " --name=b --numjobs=96" + job),
            0)
      << err_;
  EXPECT_EQ(Run("run --parse-only --name=a --numjobs=4000" + job + " --name=b --numjobs=97" + job),
            2);
  EXPECT_NE(err_.find("--numjobs: 4097 jobs with their clones in all; fio and iotail run at most "
                      "4096"),
            std::string::npos)
      << err_;
}

// Counts that each fit an interval but add up past 2^64 - 1 over the run wrapped the whole-run
// total (1553255926290428416 for 20,000 lines of 999999999999999): now damage at the line where
// the total would wrap, for pctiles and merge (whose output is not left behind).
TEST_F(MalformedInputTest, WholeRunTotalsThatWouldWrapAreDamage) {
  std::string data;
  for (int k = 1; k <= 20000; ++k) {
    data += std::to_string(k * 1000) + ", 0, 4096, 999999999999999";
    for (int c = 1; c < 29; ++c) data += ", 0";  // 29 columns: fio's layout at coarseness 6
    data += "\n";
  }
  const std::string path = Write(data);
  EXPECT_EQ(Run("pctiles --percentiles 50 " + path), 2);
  EXPECT_NE(err_.find("bad.log:18447: the counts of one bucket add up past 2^64 - 1"),
            std::string::npos)
      << err_;
  EXPECT_EQ(Run("merge -o " + (dir_ / "out.log").string() + " " + path), 2);
  EXPECT_NE(err_.find("bad.log:18447:"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(dir_ / "out.log"));
}

// A record moved back 2 s inside a log was taken as the start of a new job (exit 0): a time may go
// back only where a per_job_logs=0 file's next job starts, near the log's start.
TEST_F(MalformedInputTest, ATimeThatGoesBackInsideALogIsDamage) {
  std::string data;
  for (int k = 1; k <= 10; ++k) data += Line(std::to_string(k == 6 ? 4000 : k * 1000), "0");
  const std::string path = Write(data);
  EXPECT_EQ(Run("pctiles " + path), 2);
  EXPECT_NE(err_.find("bad.log:6: time goes back to 4000 ms, not to the log's start (1000 ms)"),
            std::string::npos)
      << err_;
  // The next job of a per_job_logs=0 file starts again where the first did: still two jobs.
  std::string two_jobs;
  for (int k = 1; k <= 5; ++k) two_jobs += Line(std::to_string(k * 1000), "0");
  for (int k = 1; k <= 5; ++k) two_jobs += Line(std::to_string(k * 1000 + 3), "0");
  EXPECT_EQ(Run("pctiles " + Write(two_jobs)), 0) << err_;
}

}  // namespace malformed_input_test
