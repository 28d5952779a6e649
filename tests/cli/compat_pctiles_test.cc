// End-to-end tests of `iotail pctiles --compat fio-histo-log-pctiles`: the built binary, run on the
// golden fio logs with the arguments recorded by scripts/gen-golden.sh, must print what fio's
// fio-histo-log-pctiles.py printed (tests/data/fio/<case>/pctiles/NAME.*), line by line, numbers
// within 1e-9 relative; and the inputs the script crashes on must get the documented results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace compat_pctiles_test {

namespace fs = std::filesystem;
using iotail::testing::Lines;
using iotail::testing::ReadFile;

const fs::path kData = fs::path(IOTAIL_TEST_DATA_DIR) / "fio";

struct Result {
  int status = -1;
  std::string out, err;
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `iotail pctiles --compat fio-histo-log-pctiles ARGS` in `dir` (TZ=UTC, as the goldens).
Result RunCompat(const fs::path& dir, const std::vector<std::string>& args) {
  static int counter = 0;
  const fs::path tmp = fs::temp_directory_path() / ("iotail-compat-" + std::to_string(::getpid()) +
                                                    "-" + std::to_string(counter++));
  std::string cmd = "cd " + Quote(dir.string()) + " && TZ=UTC " + Quote(IOTAIL_BINARY) +
                    " pctiles --compat fio-histo-log-pctiles";
  for (const auto& a : args) cmd += " " + Quote(a);
  cmd += " >" + Quote(tmp.string() + ".out") + " 2>" + Quote(tmp.string() + ".err");
  Result r;
  const int raw = std::system(cmd.c_str());
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = ReadFile(tmp.string() + ".out");
  r.err = ReadFile(tmp.string() + ".err");
  fs::remove(tmp.string() + ".out");
  fs::remove(tmp.string() + ".err");
  return r;
}

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(", ", start);
    fields.push_back(line.substr(start, comma - start));
    if (comma == std::string::npos) return fields;
    start = comma + 2;
  }
}

bool ParseNumber(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// Line-by-line comparison; numeric fields within 1e-9 relative, everything else exact. Returns the
// number of lines that were not byte-identical (for information: they should be none).
int ExpectSameOutput(const std::string& got, const std::string& want, const std::string& what) {
  const auto g = Lines(got), w = Lines(want);
  EXPECT_EQ(g.size(), w.size()) << what;
  int inexact = 0;
  for (size_t i = 0; i < std::min(g.size(), w.size()); ++i) {
    if (g[i] == w[i]) continue;
    ++inexact;
    const auto gf = Fields(g[i]), wf = Fields(w[i]);
    EXPECT_EQ(gf.size(), wf.size()) << what << " line " << i + 1 << "\n" << g[i] << "\n" << w[i];
    if (gf.size() != wf.size()) continue;
    for (size_t f = 0; f < gf.size(); ++f) {
      double a, b;
      if (ParseNumber(gf[f], &a) && ParseNumber(wf[f], &b)) {
        EXPECT_LE(std::fabs(a - b), 1e-9 * std::max(std::fabs(a), std::fabs(b)))
            << what << " line " << i + 1 << " field " << f;
      } else {
        EXPECT_EQ(gf[f], wf[f]) << what << " line " << i + 1;
      }
    }
  }
  return inexact;
}

struct GoldenRun {
  fs::path dir;
  std::string label;
  std::vector<std::string> args;
  int status;
  std::string stdout_text, stderr_tail;
};

std::vector<GoldenRun> GoldenRuns() {
  std::vector<GoldenRun> runs;
  for (const auto& c : fs::directory_iterator(kData)) {
    if (!fs::is_directory(c.path() / "pctiles")) continue;
    for (const auto& a : fs::directory_iterator(c.path() / "pctiles")) {
      if (a.path().extension() != ".args") continue;
      GoldenRun r;
      r.dir = c.path();
      r.label = c.path().filename().string() + "/" + a.path().stem().string();
      r.args = Lines(ReadFile(a.path()));
      auto base = a.path();
      r.status = std::stoi(ReadFile(base.replace_extension(".rc")));
      r.stdout_text = ReadFile(base.replace_extension(".stdout"));
      r.stderr_tail = ReadFile(base.replace_extension(".stderr"));
      runs.push_back(std::move(r));
    }
  }
  std::sort(runs.begin(), runs.end(),
            [](const GoldenRun& a, const GoldenRun& b) { return a.label < b.label; });
  return runs;
}

const GoldenRun& FindRun(const std::vector<GoldenRun>& runs, const std::string& label) {
  for (const auto& r : runs) {
    if (r.label == label) return r;
  }
  ADD_FAILURE() << "no golden run " << label;
  static const GoldenRun kNone{};
  return kNone;
}

// Every run the script completed (and every run it stopped with its own ERROR line) must be
// reproduced: same exit status, same stdout.
TEST(CompatPctilesTest, MatchesTheScriptOnEveryGoldenRunItAccepts) {
  int compared = 0, inexact = 0;
  for (const auto& run : GoldenRuns()) {
    // basic/fio2 stops with the script's own ERROR line (a fio 3 log read as fio 2), as iotail
    // must; the other failures are crashes or rejections iotail handles (tested below).
    if (run.status != 0 && run.label != "basic/fio2") continue;
    const Result r = RunCompat(run.dir, run.args);
    EXPECT_EQ(r.status, run.status) << run.label << "\n" << r.err;
    inexact += ExpectSameOutput(r.out, run.stdout_text, run.label);
    ++compared;
  }
  EXPECT_GE(compared, 18);
  EXPECT_EQ(inexact, 0) << "lines within 1e-9 but not byte-identical";
}

// Inputs the script rejects although an equivalent input works: trim lines (the same log with
// ddir 0) and per_job_logs=0 files (the same file split per job). iotail must print what the script
// printed on the equivalent input, plus a note on stderr.
TEST(CompatPctilesTest, TrimAndPerJobLogsMatchTheScriptOnEquivalentInputs) {
  const auto runs = GoldenRuns();
  for (const char* label : {"trim/default", "perjob0/default"}) {
    EXPECT_EQ(FindRun(runs, label).status, 1) << label << ": the script should fail here";
  }
  for (const char* label :
       {"trim/equiv-randtrim", "perjob0/equiv-split", "perjob0/equiv-split-p4"}) {
    const GoldenRun& run = FindRun(runs, label);
    ASSERT_EQ(run.status, 0) << label;
    const Result r = RunCompat(run.dir, run.args);
    EXPECT_EQ(r.status, 0) << label << r.err;
    ExpectSameOutput(r.out, run.stdout_text, label);
    EXPECT_NE(r.err.find("note:"), std::string::npos) << label;
  }
}

// Rows of a run: fields of each line after the header line.
std::vector<std::vector<std::string>> Rows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  bool header_seen = false;
  for (const auto& line : Lines(out)) {
    if (header_seen) rows.push_back(Fields(line));
    if (line.starts_with("msec-since-start, samples, ")) header_seen = true;
  }
  return rows;
}

// The crash inputs with no equivalent: each must exit 0 with a note, and every non-empty row must
// hold a positive sample count and non-decreasing percentiles (min <= median <= ... <= max).
TEST(CompatPctilesTest, CrashInputsGiveSaneRowsAndANote) {
  const auto runs = GoldenRuns();
  struct Case {
    const char* label;
    const char* note;
  };
  for (const Case& c : {Case{"coarse/default", "coarse"}, Case{"coarse/coarse6", "coarse"},
                        Case{"coarse/p4-tq2-usec", "coarse"}, Case{"burst/default", "zero-length"},
                        Case{"burst/p4-tq2-usec", "zero-length"}, Case{"trim/trimwrite", "trim"},
                        Case{"trim/default", "trim"}, Case{"perjob0/p4-tq2-usec", "per_job"}}) {
    const GoldenRun& run = FindRun(runs, c.label);
    EXPECT_EQ(run.status, 1) << c.label << ": the script should fail on this input";
    const Result r = RunCompat(run.dir, run.args);
    EXPECT_EQ(r.status, 0) << c.label << "\n" << r.err;
    EXPECT_NE(r.err.find(c.note), std::string::npos) << c.label << "\n" << r.err;
    const auto rows = Rows(r.out);
    ASSERT_FALSE(rows.empty()) << c.label;
    int non_empty = 0;
    for (const auto& row : rows) {
      double samples = 0;
      ASSERT_TRUE(ParseNumber(row.at(1), &samples)) << c.label;
      if (row.at(2).empty()) continue;
      ++non_empty;
      double previous = -1;
      for (size_t f = 2; f < row.size(); ++f) {
        double v = 0;
        ASSERT_TRUE(ParseNumber(row[f], &v)) << c.label << " '" << row[f] << "'";
        EXPECT_GE(v, previous) << c.label;
        previous = v;
      }
    }
    EXPECT_GT(non_empty, 0) << c.label;
  }
}

// --output-unit nsec (the script: NameError) prints the usec values times 1000.
TEST(CompatPctilesTest, NsecIsUsecTimesAThousand) {
  const auto runs = GoldenRuns();
  const GoldenRun& nsec = FindRun(runs, "basic/nsec");
  EXPECT_EQ(nsec.status, 1);
  EXPECT_NE(nsec.stderr_tail.find("NameError"), std::string::npos);
  const Result r = RunCompat(nsec.dir, nsec.args);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto usec = Rows(FindRun(runs, "basic/default").stdout_text);
  const auto ns = Rows(r.out);
  ASSERT_EQ(ns.size(), usec.size());
  for (size_t i = 0; i < ns.size(); ++i) {
    ASSERT_EQ(ns[i].size(), usec[i].size());
    EXPECT_EQ(ns[i][0], usec[i][0]);
    EXPECT_EQ(ns[i][1], usec[i][1]);
    for (size_t f = 2; f < ns[i].size(); ++f) {
      double a = 0, b = 0;
      ASSERT_TRUE(ParseNumber(ns[i][f], &a) && ParseNumber(usec[i][f], &b));
      EXPECT_NEAR(a, b * 1000, 1e-9 * a);
    }
  }
  EXPECT_NE(r.out.find("output unit = nsec\n"), std::string::npos);
}

TEST(CompatPctilesTest, TimeQuantumZeroIsAUsageError) {
  const auto runs = GoldenRuns();
  const GoldenRun& run = FindRun(runs, "basic/tq0");
  EXPECT_NE(run.stderr_tail.find("ZeroDivisionError"), std::string::npos);
  const Result r = RunCompat(run.dir, run.args);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--time-quantum"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace compat_pctiles_test

namespace compat_pctiles_test {

// A scratch directory with small synthetic logs (4-bucket lines are written with
// --bucket-groups 1 --bucket-bits 2, as the script's own unit tests do).
class CompatScratch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("iotail-compat-scratch-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  Result Run(std::vector<std::string> args) { return RunCompat(dir_, args); }
  fs::path dir_;
};

// The script's own parse errors: same message on stdout (after the preamble), exit status 1.
TEST_F(CompatScratch, ParseErrorsAreTheScriptsMessages) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"12, 0, 4096, 1a, 2, 3, 4\n", "ERROR: non-integer value in histogram record 2"},
           Case{"\n-12, 0, 4096, 1, 2, 3, 4\n",
                "ERROR: negative integer value in histogram record 3"},
           Case{"0, 0\n", "ERROR: too few numbers in histogram record 2"},
           Case{"100, 3, 4096, 1, 2, 3, 4\n", "ERROR: invalid I/O direction in histogram record 2"},
           Case{"100, 1, 20000000, 1, 2, 3, 4\n",
                "ERROR: block size too large in histogram record 2"},
           Case{"100, 1, 4096, 1, 2, 3, 4, 5\n",
                "ERROR: 5 buckets per interval but 4 expected in in histogram record 2"},
           Case{"100, 1, 4096, 1, 2, 3, 4,\n", "ERROR: non-integer value in histogram record 2"},
           Case{"", "ERROR: no records in bad.log"},
           Case{"1536504002123, 1, 4096, 1, 2, 3, 4\n",
                "ERROR: no way to estimate test start time"},
       }) {
    Write("bad.log", c.text);
    const Result r =
        Run({"--bucket-groups", "1", "--bucket-bits", "2", "--time-quantum", "5", "bad.log"});
    EXPECT_EQ(r.status, 1) << c.text;
    EXPECT_NE(r.out.find(std::string("\n") + c.message), std::string::npos) << c.text << r.out;
    EXPECT_EQ(r.out.find("msec-since-start"), std::string::npos) << c.text;
  }
}

// The script's unit test d2: records at 2000 and 7000 ms with a 5 s quantum; the first covers
// [2000, 7000) (its end time read as a start), so 60% of it lands in quantum 0.
TEST_F(CompatScratch, InterpolatesAndWeightsAsTheScript) {
  Write("a.log", "2000, 1, 4096, 1, 2, 3, 4\n7000, 1, 4096, 1, 2, 3, 4\n");
  const Result r = Run({"--bucket-groups", "1", "--bucket-bits", "2", "--time-quantum", "5",
                        "--percentiles", "0", "50", "100", "--", "a.log"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Quantum 0: 0.6 * [1,2,3,4] (6 samples); quantum 1: 0.4 * [1,2,3,4] + [1,2,3,4], whose float
  // sum 13.99... '%8d' truncates to 13. Buckets are 1 ns = 0.001 us wide; the median of quantum 0
  // falls in bucket 2 (30%..60%), 2/3 of the way. Values as printed by the script itself.
  const auto rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 2u);
  const std::vector<std::string> row0 = {"       0", "       6", "0.0", "0.002666666666666667",
                                         "0.004"};
  const std::vector<std::string> row1 = {"    5000", "      13", "0.0", "0.0026666666666666666",
                                         "0.004"};
  EXPECT_EQ(rows[0], row0);
  EXPECT_EQ(rows[1], row1);
}

TEST_F(CompatScratch, HeaderFollowsTheGivenPercentileOrderAndValuesAreSorted) {
  Write("a.log", "1000, 0, 4096, 10, 0, 0, 10\n");
  const Result r = Run({"--bucket-groups", "1", "--bucket-bits", "2", "--percentiles", "99.95", "0",
                        "100", "50", "--", "a.log"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("percentiles = 99.95,0.0,100.0,50.0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nmsec-since-start, samples, 100.0, min, max, median, \n"),
            std::string::npos)
      << r.out;
  // Empty quantum 0 (the record covers [1000, 2000)): one ", " per percentile.
  EXPECT_NE(r.out.find("\n       0,        0, , , , , \n"), std::string::npos) << r.out;
}

TEST_F(CompatScratch, ArgumentErrorsAreUsageErrors) {
  Write("a.log", "1000, 0, 4096, 10, 0, 0, 10\n");
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  for (const Case& c : {
           Case{{"--fio-version", "4", "a.log"}, "invalid choice: 4"},
           Case{{"--percentiles", "50", "a.log"}, "invalid float value: 'a.log'"},
           Case{{"--percentiles", "101", "--", "a.log"}, "--percentiles"},
           Case{{"--percentiles", "nan", "--", "a.log"}, "--percentiles"},
           Case{{"--time-quantum", "x", "a.log"}, "invalid int value: 'x'"},
           Case{{"--time-quantum", "-1", "a.log"}, "--time-quantum"},
           Case{{"--output-unit", "sec", "a.log"}, "--output-unit"},
           Case{{"--bucket", "3", "a.log"}, "ambiguous option: --bucket"},
           Case{{"--no-such", "a.log"}, "unrecognized arguments: --no-such"},
           Case{{"a.log", "--time-quantum", "2", "b.log"}, "unrecognized arguments: b.log"},
           Case{{"--time-quantum", "2"}, "required: file_list"},
           Case{{"--log-hist-msec", "--time-quantum", "2", "a.log"}, "expected one argument"},
       }) {
    const Result r = Run(c.args);
    EXPECT_EQ(r.status, 2) << c.message << r.out;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.message << ": " << r.err;
  }
}

TEST_F(CompatScratch, AcceptsArgparseSpellings) {
  Write("a.log", "1000, 0, 4096, 10, 0, 0, 10\n2000, 0, 4096, 0, 5, 0, 1\n");
  const Result full = Run(
      {"--bucket-groups", "1", "--bucket-bits", "2", "--percentiles", "50", "-5", "--", "a.log"});
  ASSERT_EQ(full.status, 0) << full.err;
  const Result abbreviated =
      Run({"a.log", "--bucket-g=1", "--bucket-b", "2", "--perc", "50", "-5"});
  EXPECT_EQ(abbreviated.status, 0) << abbreviated.err;
  EXPECT_EQ(abbreviated.out, full.out);
  EXPECT_NE(full.out.find("percentiles = 50.0,-5.0\n"), std::string::npos) << full.out;
  const Result help = Run({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--time-quantum"), std::string::npos);
}

}  // namespace compat_pctiles_test
