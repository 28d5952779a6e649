// Job files that are hostile or not job files at all: arithmetic that overflows, nesting and
// include chains deep enough to overflow a stack, include bombs, files that are not regular or too
// large, files that are not job files (whose content must not be echoed), and too many sections.
// Each is a UsageError naming FILE:LINE (exit 2 through the binary) in bounded time and memory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/job_file.h"
#include "job_file_fixture.h"
#include "stats/core/errors.h"

namespace job_file_limits_test {

using iotail::cli::EvaluateArithmetic;
using iotail::stats::UsageError;
using iotail::testing::CommandResult;

class JobFileLimitsTest : public iotail::testing::JobFileTest {};

// The message of the UsageError evaluating `text` throws ("" if none).
std::string ArithmeticError(const std::string& text) {
  try {
    EvaluateArithmetic(text, "where");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_F(JobFileLimitsTest, ArithmeticOverflowIsAnErrorAtEveryOperator) {
  const std::string min = "(-9223372036854775807-1)";
  EXPECT_EQ(EvaluateArithmetic(min, "x"), INT64_MIN);
  EXPECT_EQ(EvaluateArithmetic(min + "/1", "x"), INT64_MIN);
  EXPECT_EQ(EvaluateArithmetic(min + "%-1", "x"), 0);  // exact: the remainder is 0
  EXPECT_EQ(EvaluateArithmetic("(-2)^63", "x"), INT64_MIN);
  EXPECT_EQ(EvaluateArithmetic("2^62", "x"), int64_t{1} << 62);
  for (const std::string& text : {min + "/-1", "-" + min, "0-" + min, min + "*-1", "-1*" + min,
                                  std::string("9223372036854775807+1"), std::string("2^63"),
                                  std::string("9223372036854775808"), std::string("8388608t")}) {
    SCOPED_TRACE(text);
    EXPECT_NE(ArithmeticError(text).find("overflows 64 bits"), std::string::npos)
        << ArithmeticError(text);
  }
  EXPECT_NE(ArithmeticError("1%0").find("division by zero"), std::string::npos);
}

TEST_F(JobFileLimitsTest, HugeExponentsOfOneEndAtOnce) {
  EXPECT_EQ(EvaluateArithmetic("1^9223372036854775807", "x"), 1);
  EXPECT_EQ(EvaluateArithmetic("(-1)^9223372036854775807", "x"), -1);
  EXPECT_EQ(EvaluateArithmetic("0^9223372036854775807", "x"), 0);
  EXPECT_EQ(EvaluateArithmetic("3^0", "x"), 1);
}

TEST_F(JobFileLimitsTest, ArithmeticErrorsNameTheFileLineAndOption) {
  const std::string f = (dir_ / "bad.fio").string();
  const std::string e = Error("[a]\nbs=((-9223372036854775807-1)/-1)\n");
  EXPECT_EQ(e.rfind(f + ":2: --bs: bad arithmetic", 0), 0u) << e;
  EXPECT_NE(e.find("overflows 64 bits"), std::string::npos) << e;
}

// The overflows that killed `iotail run`, `--parse-only` and `--showcmd` with SIGFPE.
TEST_F(JobFileLimitsTest, ArithmeticOverflowThroughTheBinaryExitsTwo) {
  for (const std::string expr :
       {"((-9223372036854775807-1)/-1)", "(-(-9223372036854775807-1))", "(1/0)"}) {
    const std::string file = Write("a.fio", "[a]\nioengine=null\nsize=1m\nbs=" + expr + "\n");
    for (const std::string mode : {"", "--parse-only ", "--showcmd "}) {
      SCOPED_TRACE(mode + expr);
      const CommandResult r = RunBounded("run --live_format=none " + mode + file);
      EXPECT_EQ(r.status, 2) << r.err;
      EXPECT_NE(r.err.find(file + ":4: --bs: bad arithmetic"), std::string::npos) << r.err;
    }
  }
  // The remainder is exact (0): --bs refuses a block size of 0, and so does --showcmd rather than
  // print --bs=0 (issue 38; fio's --showcmd drops such a job).
  const std::string file =
      Write("a.fio", "[a]\nioengine=null\nsize=1m\nbs=((-9223372036854775807-1)%-1)\n");
  for (const std::string mode : {"--showcmd ", "--parse-only "}) {
    const CommandResult r = RunBounded("run " + mode + file);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.out.find("--bs=0"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find(file + ":4: --bs: bad block size '0'"), std::string::npos) << r.err;
  }
}

// A job's default files are named before its clones are counted: numjobs times nrfiles is bounded
// there (found by tests/fuzz/job_options_fuzz.cc), not named one by one until memory runs out.
TEST_F(JobFileLimitsTest, HugeNumjobsTimesNrfilesIsRefusedBeforeNamingTheFiles) {
  const CommandResult r = RunBounded(
      "run --parse-only --name=x --ioengine=null --size=1m --numjobs=100000 --nrfiles=100000");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--nrfiles: 100000 files for each of 100000 clones (--numjobs) make more "
                       "than 1048576 files"),
            std::string::npos)
      << r.err;
}

TEST_F(JobFileLimitsTest, ArithmeticNestingIsBounded) {
  const std::string deepest = std::string(256, '(') + "1" + std::string(256, ')');
  EXPECT_EQ(EvaluateArithmetic(deepest, "x"), 1);
  std::string powers = "1";
  for (int i = 0; i < 300; ++i) powers += "^1";
  for (const std::string& text :
       {"(" + deepest + ")", std::string(257, '-') + "1", powers, "-(" + deepest + ")"}) {
    SCOPED_TRACE(text.substr(0, 20));
    EXPECT_NE(ArithmeticError(text).find("nested deeper than 256"), std::string::npos)
        << ArithmeticError(text).substr(0, 200);
  }
}

// 50,000 parentheses overflowed the stack (SIGSEGV).
TEST_F(JobFileLimitsTest, DeepParenthesesThroughTheBinaryExitTwo) {
  const std::string file =
      Write("deep.fio", "[a]\nioengine=null\nsize=1m\nbs=" + std::string(50'000, '(') + "4096" +
                            std::string(50'000, ')') + "\n");
  for (const std::string mode : {"--parse-only ", "--showcmd "}) {
    const CommandResult r = RunBounded("run " + mode + file);
    EXPECT_EQ(r.status, 2) << mode;
    EXPECT_NE(r.err.find(file + ":4: --bs: bad arithmetic"), std::string::npos)
        << r.err.substr(0, 300);
    EXPECT_NE(r.err.find("nested deeper than 256"), std::string::npos) << r.err.substr(0, 300);
    EXPECT_LT(r.err.size(), 1000u);  // the expression is not echoed whole
  }
}

// `iotail run --parse-only /dev/zero` (or `include /dev/zero`) read without end.
TEST_F(JobFileLimitsTest, JobFilesAreRegularFilesThroughTheBinary) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir_.string()}) {
    SCOPED_TRACE(path);
    CommandResult r = RunBounded("run --parse-only " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("job file '" + path + "': not a regular file"), std::string::npos)
        << r.err;
    const std::string top = Write("top.fio", "[a]\ninclude " + path + "\n");
    r = RunBounded("run --parse-only " + top);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(top + ":2: include '" + path + "': not a regular file"), std::string::npos)
        << r.err;
  }
}

TEST_F(JobFileLimitsTest, JobFilesAreAtMostSixteenMiB) {
  const std::string big = Write("big.fio", "[a]\nbs=4k\n");
  std::filesystem::resize_file(big, (16 << 20) + 1);  // a sparse tail of zero bytes
  EXPECT_EQ(ErrorOf(big).rfind("job file '" + big + "': larger than 16 MiB", 0), 0u)
      << ErrorOf(big);
  const std::string e = Error("[a]\ninclude big.fio\n");
  EXPECT_EQ(e.rfind((dir_ / "bad.fio").string() + ":2: include 'big.fio': larger than 16 MiB", 0),
            0u)
      << e;
}

TEST_F(JobFileLimitsTest, IncludesNestSixtyFourDeep) {
  // top.fio includes c1.fio, which includes c2.fio, ... up to c`depth`.fio, which sets bs.
  const auto chain = [&](int depth) {
    for (int i = 1; i <= depth; ++i) {
      Write("c" + std::to_string(i) + ".fio",
            i < depth ? "include c" + std::to_string(i + 1) + ".fio\n" : std::string("bs=4k\n"));
    }
    return Write("top.fio", "[a]\ninclude c1.fio\n");
  };
  const auto sections =
      iotail::cli::ParseJobFile(chain(64), iotail::testing::TestJobFileEnvironment());
  ASSERT_EQ(sections.size(), 1u);
  ASSERT_EQ(sections[0].settings.size(), 1u);
  EXPECT_EQ(sections[0].settings[0].origin, (dir_ / "c64.fio").string() + ":1");
  const std::string e = ErrorOf(chain(65));
  EXPECT_EQ(
      e.rfind((dir_ / "c64.fio").string() + ":1: include 'c65.fio': includes nested deeper than 64",
              0),
      0u)
      << e;
}

// An include chain 10,000 files deep overflowed the stack (SIGSEGV).
TEST_F(JobFileLimitsTest, DeepIncludeChainThroughTheBinaryExitsTwo) {
  for (int i = 1; i <= 10'000; ++i) {
    Write("c" + std::to_string(i) + ".fio", "include c" + std::to_string(i + 1) + ".fio\n");
  }
  const std::string top = Write("top.fio", "[a]\ninclude c1.fio\n");
  // In the scratch directory: each include is found as given, and named so.
  const CommandResult r = RunBounded("run --parse-only " + top);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("c64.fio:1: include 'c65.fio': includes nested deeper than 64"),
            std::string::npos)
      << r.err;
}

// Each file includes the next twice: 20 levels took 58 s and 554 MB.
TEST_F(JobFileLimitsTest, IncludeBombEndsAtOnce) {
  for (int i = 1; i <= 20; ++i) {
    const std::string next = i < 20 ? "include b" + std::to_string(i + 1) + ".fio\n" : "";
    Write("b" + std::to_string(i) + ".fio", i < 20 ? next + next : "bs=4k\n");
  }
  const std::string top = Write("top.fio", "[a]\ninclude b1.fio\ninclude b1.fio\n");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = RunBounded("run --parse-only " + top);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(": more than 16384 includes in all"), std::string::npos) << r.err;
}

TEST_F(JobFileLimitsTest, IncludedBytesAreBoundedInAll) {
  // Each file is 1 MiB of comment and includes the next twice: the 17th read passes 16 MiB.
  const std::string comment = "#" + std::string((1 << 20) - 2, 'x') + "\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string next = "include b" + std::to_string(i + 1) + ".fio\n";
    Write("b" + std::to_string(i) + ".fio", comment + next + next);
  }
  Write("b11.fio", "bs=4k\n");
  const std::string e = Error("[a]\ninclude b1.fio\n");
  EXPECT_NE(e.find("the job file and its includes exceed 16 MiB in all"), std::string::npos) << e;
}

// `include /etc/shadow` printed the file's first line in the error.
TEST_F(JobFileLimitsTest, FilesThatAreNotJobFilesAreNotEchoed) {
  const std::string secret = "root:$6$salt$hash:19000:0:99999:7:::";
  const std::string shadow =
      Write("shadow", "# a comment\n" + secret + "\nbin:*:19000:0:99999:7:::\n");
  const std::string top = Write("top.fio", "[a]\nioengine=null\nsize=1m\ninclude " + shadow + "\n");
  for (const std::string& file : {top, shadow}) {
    const CommandResult r = RunBounded("run --parse-only " + file);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(shadow + ":2: not a fio job file"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("root"), std::string::npos) << r.err;
  }
  // The first line decides, whatever it is: binary bytes, a setting whose value fails, zero
  // bytes; as the job file or as an include. A setting before any [section] and a bad header
  // cannot begin a job file either.
  Write("elf", std::string("\x7f"
                           "ELF\x02\x01\x01\0\0\0",
                           11) +
                   "\n");
  Write("env", "export HOME=$HOME/secret\n");
  Write("zeros", std::string(1 << 20, '\0'));
  for (const std::string name : {"elf", "env", "zeros"}) {
    const std::string path = (dir_ / name).string();
    for (const std::string& e : {Error("[a]\ninclude " + name + "\n"), ErrorOf(path)}) {
      EXPECT_EQ(e.rfind(path + ":1: not a fio job file", 0), 0u) << name << ": " << e;
      EXPECT_EQ(e.find("secret"), std::string::npos) << e;
    }
  }
  EXPECT_EQ(Error("[a\nsecret\n").rfind((dir_ / "bad.fio").string() + ":1: not a fio job file", 0),
            0u);
  EXPECT_EQ(Error("secret=1\n").rfind((dir_ / "bad.fio").string() + ":1: not a fio job file", 0),
            0u);
}

TEST_F(JobFileLimitsTest, ControlBytesAreNeverEchoed) {
  const std::string file = Write("ctl.fio", "[a]\nioengine=null\nsize=1m\nbs=4k\x01\x1b[31mred\n");
  const CommandResult r = RunBounded("run --parse-only " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(file + ":4: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\x01"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x01'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  // In a header, an include path, a ${VAR} name or arithmetic as well.
  for (const std::string& line : {std::string("[b\x07]"), std::string("include x\x07"),
                                  std::string("bs=${X\x07}"), std::string("bs=(1\x07)")}) {
    const std::string e = Error("[a]\nbs=4k\n" + line + "\n");
    EXPECT_EQ(e.rfind((dir_ / "bad.fio").string() + ":3: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\x07'), std::string::npos) << e;
  }
}

TEST_F(JobFileLimitsTest, AByteOrderMarkAndCarriageReturnsAreText) {
  const std::string file = Write("bom.fio", "\xef\xbb\xbf[a]\r\nbs=4k\r\n");
  const auto sections = iotail::cli::ParseJobFile(file, iotail::testing::TestJobFileEnvironment());
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].name, "a");
  ASSERT_EQ(sections[0].settings.size(), 1u);
  EXPECT_EQ(sections[0].settings[0].value, "4k");
}

// 5,000 sections used 3.25 GB in `iotail run`, and 100,000 were killed for lack of memory.
TEST_F(JobFileLimitsTest, AtMost4096JobSections) {
  std::string text = "[global]\nioengine=null\nsize=4k\n";
  for (int i = 0; i < 4096; ++i)
    text += "[j" + std::to_string(i) + "]\n[global-" + std::to_string(i) + "]\n";
  const std::string ok = Write("ok.fio", text);
  EXPECT_EQ(ErrorOf(ok), "");
  const std::string over = Write("over.fio", text + "[last]\n");
  EXPECT_EQ(ErrorOf(over).rfind(
                over + ":" + std::to_string(3 + 2 * 4096 + 1) + ": more than 4096 job sections", 0),
            0u)
      << ErrorOf(over);
  std::string many;
  for (int i = 0; i < 100'000; ++i) many += "[j" + std::to_string(i) + "]\n";
  const std::string file = Write("many.fio", "[global]\nioengine=null\nsize=4k\n" + many);
  const CommandResult r = RunBounded("run --live_format=none " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(file + ":4100: more than 4096 job sections"), std::string::npos) << r.err;
}

// 10,000 global settings over 4,096 jobs took `iotail run --parse-only` 25 s and 2.6 GB: each job
// applies and keeps every global setting before it.
TEST_F(JobFileLimitsTest, TheJobsSettingsWithTheGlobalOnesTheyInheritAreBounded) {
  std::string globals = "[global]\nioengine=null\nsize=4k\n";
  for (int i = 0; i < 254; ++i) globals += "bs=4k\n";
  std::string jobs;
  for (int i = 0; i < 4096; ++i) jobs += "[j" + std::to_string(i) + "]\n";
  EXPECT_EQ(ErrorOf(Write("ok.fio", globals + jobs)), "");  // 256 x 4096 = 2^20
  const std::string over = Write("over.fio", globals + jobs + "rw=read\n");
  EXPECT_EQ(ErrorOf(over).rfind(over + ":" + std::to_string(3 + 254 + 4096 + 1) +
                                    ": the jobs come to more than 1048576 settings",
                                0),
            0u)
      << ErrorOf(over);
  for (int i = 0; i < 10'000; ++i) globals += "bs=4k\n";
  const std::string file = Write("many.fio", globals + jobs);
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = RunBounded("run --parse-only " + file);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(": the jobs come to more than 1048576 settings"), std::string::npos)
      << r.err;
}

TEST_F(JobFileLimitsTest, WhatTheSettingsTakeIsBounded) {
  // 2 MiB of one-letter settings from a file whose path is long: each keeps its FILE:LINE.
  const std::string name = std::string(200, 'n') + ".fio";
  std::string lines;
  for (int i = 0; i < (1 << 20); ++i) lines += "a\n";
  Write(name, lines);
  const std::string e = Error("[a]\ninclude " + name + "\n");
  EXPECT_NE(e.find(": the settings take more than 64 MiB"), std::string::npos) << e.substr(0, 300);
}

TEST_F(JobFileLimitsTest, AVariableRepeatedIsBoundedAsTheSettings) {
  // 1 MiB from the environment, 100 times on one line: 100 MiB from 700 bytes.
  iotail::cli::JobFileEnvironment env = iotail::testing::TestJobFileEnvironment();
  env.getenv = [](const std::string&) -> std::optional<std::string> {
    return std::string(1 << 20, 'x');
  };
  std::string value;
  for (int i = 0; i < 100; ++i) value += "${BIG}";
  const std::string file = Write("big.fio", "[a]\nfilename=" + value + "\n");
  try {
    iotail::cli::ParseJobFile(file, env);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(file + ":2: the settings take more than 64 MiB", 0), 0u)
        << e.what();
  }
}

TEST_F(JobFileLimitsTest, ShowcmdOutputIsBounded) {
  // fio repeats the global settings so far at each global section: quadratic in their number.
  std::string text;
  for (int i = 0; i < 10'000; ++i) text += "[global]\nbs=4k\n";
  const std::string file = Write("globals.fio", text);
  try {
    iotail::cli::ShowCommand({file}, iotail::testing::TestJobFileEnvironment(), "iotail run");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(
        std::string(e.what()).find(": --showcmd: the command lines would take more than 64 MiB"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace job_file_limits_test
