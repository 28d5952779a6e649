// fio job files in `iotail run`: the parser's rules and errors (FILE:LINE), and a corpus of job
// files (tests/data/jobs) run under both fio 3.33 and iotail, comparing the jobs each made, their
// reporting groups and what each did; --showcmd compared with fio's. Tests that need fio skip with
// the reason when it is not installed.
#include "cli/job_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli_test_util.h"
#include "job_file_fixture.h"
#include "stats/core/errors.h"

namespace job_file_test {

namespace fs = std::filesystem;
using iotail::cli::EvaluateArithmetic;
using iotail::cli::JobFileEnvironment;
using iotail::cli::ParseJobFile;
using iotail::testing::CommandResult;
using iotail::testing::JobFileTest;
using json = nlohmann::json;

const std::string kCorpus = std::string(IOTAIL_TEST_DATA_DIR) + "/jobs/";

JobFileEnvironment TestEnv() { return iotail::testing::TestJobFileEnvironment(); }

TEST_F(JobFileTest, SectionsSettingsCommentsAndVariables) {
  const auto sections = ParseJobFile(Write("a.fio",
                                           "; a comment\n"
                                           "[global]\n"
                                           "bs = ${BS} ; inline\n"
                                           "time-based   # a flag, dashes as underscores\n"
                                           "[job1]\n"
                                           "iodepth=$ncpus*2\n"
                                           "size=$mb_memory/4*1m\n"
                                           "offset=(1k+512)\n"
                                           "numjobs=(2^3)\n"
                                           "\n"
                                           "[global-2]\n"
                                           "rw=randread\n"
                                           "filename_format=$JobNum.$filenum\n"
                                           "description=cost $5, or $ncpu\n"),
                                     TestEnv());
  ASSERT_EQ(sections.size(), 3u);
  // fio's other $words stay as they are (filename_format replaces its own later).
  ASSERT_EQ(sections[2].settings.size(), 3u);
  EXPECT_EQ(sections[2].settings[1].value, "$JobNum.$filenum");
  EXPECT_EQ(sections[2].settings[2].value, "cost $5, or $ncpu");
  EXPECT_TRUE(sections[0].global);
  EXPECT_FALSE(sections[1].global);
  EXPECT_TRUE(sections[2].global);  // any name starting with "global"
  ASSERT_EQ(sections[0].settings.size(), 2u);
  EXPECT_EQ(sections[0].settings[0].value, "64k");
  EXPECT_EQ(sections[0].settings[1].name, "time_based");
  EXPECT_TRUE(sections[0].settings[1].bare);
  EXPECT_EQ(sections[0].settings[1].origin, (dir_ / "a.fio").string() + ":4");
  ASSERT_EQ(sections[1].settings.size(), 4u);
  EXPECT_EQ(sections[1].settings[0].value, "12");
  EXPECT_EQ(sections[1].settings[1].value, std::to_string(256 << 20));  // suffixes in 1024s
  EXPECT_EQ(sections[1].settings[2].value, "1536");
  EXPECT_EQ(sections[1].settings[3].value, "8");
}

TEST_F(JobFileTest, Arithmetic) {
  EXPECT_EQ(EvaluateArithmetic("2+3*4", "x"), 14);
  EXPECT_EQ(EvaluateArithmetic("(2+3)*4", "x"), 20);
  EXPECT_EQ(EvaluateArithmetic("2^10", "x"), 1024);
  EXPECT_EQ(EvaluateArithmetic("17 % 5 - -1", "x"), 3);
  EXPECT_EQ(EvaluateArithmetic("4k/2", "x"), 2048);
  EXPECT_EQ(EvaluateArithmetic("1g", "x"), int64_t{1} << 30);
  EXPECT_THROW(EvaluateArithmetic("1/0", "x"), iotail::stats::UsageError);
  EXPECT_THROW(EvaluateArithmetic("(1+2", "x"), iotail::stats::UsageError);
  EXPECT_THROW(EvaluateArithmetic("2^70", "x"), iotail::stats::UsageError);
}

TEST_F(JobFileTest, ErrorsNameTheFileAndLine) {
  const std::string f = (dir_ / "bad.fio").string();
  // An unset variable is the empty string, as in fio (issue 37): no error.
  const auto unset = ParseJobFile(Write("unset.fio", "[a]\nbs=${NOPE}4k\n"),
                                  iotail::testing::TestJobFileEnvironment());
  ASSERT_EQ(unset.size(), 1u);
  ASSERT_EQ(unset[0].settings.size(), 1u);
  EXPECT_EQ(unset[0].settings[0].value, "4k");
  EXPECT_EQ(Error("[a]\nbs=${NOPE\n").rfind(f + ":2: '${' without its '}'", 0), 0u);
  EXPECT_EQ(Error("[a]\n[b\n").rfind(f + ":2: a section header is '[name]', got '[b'", 0), 0u);
  EXPECT_EQ(Error("[a]\n=4k\n").rfind(f + ":2: a setting is 'name=value'", 0), 0u);
  EXPECT_EQ(Error("bs=4k\n").rfind(f + ":1: not a fio job file", 0), 0u);
  Write("inc.fio", "bs=4k\n");
  EXPECT_EQ(Error("include inc.fio\n[a]\n")
                .rfind((dir_ / "inc.fio").string() + ":1: a setting outside any [section]", 0),
            0u);
  EXPECT_EQ(Error("[a]\niodepth=($ncpus*)\n").rfind(f + ":2: --iodepth: bad arithmetic", 0), 0u);
  EXPECT_EQ(Error("[a]\ninclude missing.fio\n").rfind(f + ":2: include 'missing.fio'", 0), 0u);
  Write("self.fio", "include self.fio\n");
  EXPECT_NE(Error("[a]\ninclude self.fio\n").find("include loop"), std::string::npos);
  Write("sections.fio", "[b]\n");
  EXPECT_NE(Error("[a]\ninclude sections.fio\n").find("sections.fio:1: a section in an included"),
            std::string::npos);
}

// The fuzzer's way: files held in memory, the real file system never read.
TEST_F(JobFileTest, FilesComeFromTheEnvironmentsReader) {
  JobFileEnvironment env = TestEnv();
  const std::map<std::string, std::string> files = {{"job.fio", "[a]\ninclude 1\n"},
                                                    {"1", "include 2\n"},
                                                    {"2", "bs=4k\n"},
                                                    {"loop", "include loop\n"}};
  env.read_file = [&files](const std::string& path,
                           size_t) -> std::optional<iotail::cli::JobFileContents> {
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return iotail::cli::JobFileContents{it->second, path};
  };
  const auto sections = ParseJobFile("job.fio", env);
  ASSERT_EQ(sections.size(), 1u);
  ASSERT_EQ(sections[0].settings.size(), 1u);
  EXPECT_EQ(sections[0].settings[0].origin, "2:1");
  const auto error = [&env](const std::string& path) {
    try {
      ParseJobFile(path, env);
    } catch (const iotail::stats::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("nothing.fio"), "job file 'nothing.fio': cannot open it (no such file)");
  EXPECT_EQ(error("/etc/passwd"), "job file '/etc/passwd': cannot open it (no such file)");
  EXPECT_NE(error("loop").find("include loop"), std::string::npos) << error("loop");
}

// What each job did, from a JSON summary: name, reporting group, bytes read and written.
using Entry = std::tuple<std::string, int, uint64_t, uint64_t>;
std::vector<Entry> Entries(const std::string& text) {
  const json j = json::parse(text.substr(text.find('{')));
  std::vector<Entry> out;
  for (const json& job : j["jobs"]) {
    out.emplace_back(job["jobname"], job["groupid"], job["read"]["io_bytes"],
                     job["write"]["io_bytes"]);
  }
  return out;
}

class JobFileCorpusTest : public JobFileTest {
 protected:
  CommandResult Run(const std::string& tool, const std::string& args) {
    const fs::path d = dir_ / tool;
    fs::create_directories(d);
    const std::string bin =
        tool == "fio" ? "fio" : std::string(IOTAIL_BINARY) + " run --live_format=none";
    return iotail::testing::RunShell(
        "cd " + d.string() + " && IOTAIL_TEST_BS=16k " + bin + " --output-format=json " + args, d);
  }
  void CompareWithFio(const std::string& args) {
    SCOPED_TRACE(args);
    if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
    const CommandResult fio = Run("fio", args);
    ASSERT_EQ(fio.status, 0) << fio.err;
    ASSERT_EQ(fio.err.find("dropped"), std::string::npos) << fio.err;  // fio ran every job
    const CommandResult ours = Run("iotail", args);
    ASSERT_EQ(ours.status, 0) << ours.err;
    const auto expected = Entries(fio.out);
    EXPECT_GE(expected.size(), 2u);
    EXPECT_EQ(Entries(ours.out), expected) << ours.out;
  }
};

TEST_F(JobFileCorpusTest, GlobalsIncludesVariablesAndArithmeticAsFio) {
  CompareWithFio(kCorpus + "globals.fio");
}

TEST_F(JobFileCorpusTest, StonewallNewGroupAndNumjobsAsFio) {
  CompareWithFio(kCorpus + "groups.fio");
}

TEST_F(JobFileCorpusTest, GroupReportingAsFio) { CompareWithFio(kCorpus + "reporting.fio"); }

TEST_F(JobFileCorpusTest, SeveralFilesAreSeparatedByAStonewallAsFio) {
  CompareWithFio(kCorpus + "groups.fio " + kCorpus + "second.fio");
}

TEST_F(JobFileCorpusTest, SectionSelectsJobsAsFio) {
  // With several files fio 3.33 also runs the first job of each later file whatever --section
  // says; iotail runs only the sections asked for, so the comparison is on one file.
  CompareWithFio("--section=a --section=d " + kCorpus + "groups.fio");
}

TEST_F(JobFileCorpusTest, CommandLineOptionsAreDefaultsBeneathTheFilesAsFio) {
  // --bs on the command line loses to the file's own bs, as in fio; --numjobs applies.
  CompareWithFio("--bs=64k --numjobs=2 " + kCorpus + "second.fio");
}

TEST_F(JobFileCorpusTest, ShowcmdAsFio) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const std::string files = kCorpus + "globals.fio " + kCorpus + "groups.fio";
  const CommandResult fio = iotail::testing::RunShell(
      "cd " + dir_.string() + " && IOTAIL_TEST_BS=16k fio --showcmd " + files, dir_);
  const CommandResult ours = iotail::testing::RunShell(
      "cd " + dir_.string() + " && IOTAIL_TEST_BS=16k " + IOTAIL_BINARY + " run --showcmd " + files,
      dir_);
  ASSERT_EQ(ours.status, 0) << ours.err;
  std::string expected = fio.out;
  for (size_t at = 0; (at = expected.find("fio --", at)) != std::string::npos; at += 10) {
    expected.replace(at, 3, "iotail run");
  }
  EXPECT_EQ(ours.out, expected);
}

TEST_F(JobFileCorpusTest, TyposAndUnsupportedOptionsAreClearErrors) {
  const std::string typo = Write("typo.fio", "[a]\nioengine=null\nsize=1m\niodepht=4\n");
  CommandResult r = Run("iotail", typo);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(typo + ":4: unknown option '--iodepht', did you mean --iodepth?"),
            std::string::npos)
      << r.err;
  const std::string fio_only =
      Write("fio-only.fio", "[a]\nioengine=null\nsize=1m\nverify_offset=8\n");
  r = Run("iotail", fio_only);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(
      r.err.find(fio_only + ":4: '--verify_offset' is a fio option that iotail does not support"),
      std::string::npos)
      << r.err;
  // A value iotail lacks of an option it has: refused at its line, by name.
  const std::string sg = Write("sg.fio", "[a]\nsize=1m\nioengine=sg\n");
  r = Run("iotail", sg);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(sg + ":3: --ioengine=sg: iotail does not support fio's sg engine"),
            std::string::npos)
      << r.err;
  r = Run("iotail", "--name=a --rw=randred");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("got 'randred', did you mean randread?"), std::string::npos) << r.err;
  const std::string value_typo = Write("value-typo.fio", "[a]\nioengine=null\nrw=randwirte\n");
  r = Run("iotail", value_typo);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(value_typo + ":3: --rw:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean randwrite?"), std::string::npos) << r.err;
  r = Run("iotail", "--name=a --nmjobs=2");
  EXPECT_NE(r.err.find("unknown option '--nmjobs', did you mean --numjobs?"), std::string::npos)
      << r.err;
  const std::string bad_value = Write("value.fio", "[a]\nioengine=null\nsize=1m\nbs=4q\n");
  r = Run("iotail", bad_value);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(bad_value + ":4: --bs:"), std::string::npos) << r.err;
}

TEST_F(JobFileCorpusTest, ParseOnlyChecksWithoutRunning) {
  const CommandResult r = Run("iotail", "--parse-only " + kCorpus + "groups.fio");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("4 job(s) (7 with their clones) in 3 group(s)"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty() || r.out.find("{") == std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "iotail" / "a.0.0"));  // nothing created
}

}  // namespace job_file_test
