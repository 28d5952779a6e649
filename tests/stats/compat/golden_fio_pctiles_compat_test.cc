// Tests of the fio-histo-log-pctiles.py emulation at library level: Python's float repr (checked
// against CPython 3.11's repr() of the same values) and thread-count independence of the results on
// the golden fio logs. The full comparison with the script's output is tests/cli/compat_*_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "stats/core/errors.h"
#include "stats/compat/fio_pctiles_compat.h"

namespace iotail::stats {
namespace golden_fio_pctiles_compat_test {

namespace fs = std::filesystem;

TEST(FioPctilesCompatTest, PythonFloatReprMatchesCPython) {
  const std::pair<double, const char*> cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {100.0, "100.0"},
      {0.1, "0.1"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1.5e+16, "1.5e+16"},
      {1e+16, "1e+16"},
      {9999999999999998.0, "9999999999999998.0"},
      {1000000000000000.0, "1000000000000000.0"},
      {123456789.125, "123456789.125"},
      {2.5e-310, "2.5e-310"},
      {1.7976931348623157e+308, "1.7976931348623157e+308"},
      {-3.14, "-3.14"},
      {59244.54399997475, "59244.54399997475"},
      {INFINITY, "inf"},
      {-INFINITY, "-inf"},
      {NAN, "nan"},
      {1.0 / 3, "0.3333333333333333"},
      {9007199254740992.0, "9007199254740992.0"},
      {0.1 + 0.2, "0.30000000000000004"},
  };
  for (const auto& [value, text] : cases) EXPECT_EQ(PythonFloatRepr(value), text) << text;
}

std::string RunToString(FioPctilesCompatOptions options, int* status) {
  std::ostringstream out, err;
  *status = RunFioPctilesCompat(options, out, err);
  return out.str();
}

TEST(FioPctilesCompatTest, ResultDoesNotDependOnThreadCount) {
  const fs::path dir = fs::path(IOTAIL_TEST_DATA_DIR) / "fio/randrw";
  FioPctilesCompatOptions options;
  for (int i = 1; i <= 3; ++i) {
    options.files.push_back((dir / ("hist_clat_hist." + std::to_string(i) + ".log")).string());
  }
  options.threads = 1;
  int status1 = -1, status3 = -1;
  const std::string one = RunToString(options, &status1);
  options.threads = 3;
  const std::string three = RunToString(options, &status3);
  EXPECT_EQ(status1, 0);
  EXPECT_EQ(status3, 0);
  EXPECT_EQ(one, three);
  EXPECT_NE(one.find("msec-since-start, samples, min, median, 95.0, 99.0, max, \n"),
            std::string::npos);
}

TEST(FioPctilesCompatTest, ValidationRejectsWhatTheScriptCannotRun) {
  FioPctilesCompatOptions ok;
  ok.files = {"x.log"};
  EXPECT_NO_THROW(ValidateFioPctilesCompatOptions(ok));
  auto bad = [&](auto mutate) {
    FioPctilesCompatOptions o = ok;
    mutate(o);
    EXPECT_THROW(ValidateFioPctilesCompatOptions(o), UsageError);
  };
  bad([](auto& o) { o.time_quantum_s = 0; });
  bad([](auto& o) { o.fio_version = 4; });
  bad([](auto& o) { o.percentiles = {50, 100.5}; });
  bad([](auto& o) { o.percentiles = {NAN}; });
  bad([](auto& o) { o.bucket_bits = -1; });
  bad([](auto& o) { o.files.clear(); });
  EXPECT_THROW(ParseFioPctilesUnit("sec"), UsageError);
  EXPECT_EQ(ParseFioPctilesUnit("nsec"), FioPctilesUnit::kNsec);
}

TEST(FioPctilesCompatTest, MissingFileIsASystemError) {
  FioPctilesCompatOptions options;
  options.files = {"/nonexistent/iotail/x.log"};
  std::ostringstream out, err;
  EXPECT_THROW(RunFioPctilesCompat(options, out, err), std::system_error);
}

}  // namespace golden_fio_pctiles_compat_test
}  // namespace iotail::stats
