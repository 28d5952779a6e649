#include "cli/option_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "cli/option_suggest.h"
#include "cli/sweep_options.h"
#include "stats/core/errors.h"
#include "tests/test_util.h"

namespace iotail::cli {
namespace option_table_test {

// iotail's own options: not fio's, and documented as iotail's.
const std::set<std::string_view> kIotailOwn = {
    "help",        "uri",      "allow_destructive", "start_at",   "status_interval",
    "live_format", "sla",      "log_hist_groups",   "prometheus", "prometheus_linger",
    "nbd_timeout", "nbd_path", "nbd_conns",         "explain",    "explain_slowest",
    "replay_map"};
// fio's names from releases after 3.33 (whose option list the test reads),
// and fio 3.33's that its `--cmdhelp=all` (the generator's source) leaves out: among them the
// deprecated ones it still takes, with a warning (verifysort, verifysort_nr).
const std::set<std::string_view> kNewerFio = {"steadystate_check_interval", "ss_interval",
                                              "verify_async_cpus", "verifysort", "verifysort_nr"};

// A driver's rows (sweep's) are of scope run, with run setters, and shadow run's rows only where
// they mean to (sweep's --ramp_time is the step's).
TEST(OptionTableTest, SweepsRowsAreRunSettings) {
  for (const OptionGroup& group : SweepOptionGroups()) {
    for (const OptionDef& d : group.rows) {
      EXPECT_EQ(d.scope, OptionScope::kRun) << d.name;
      EXPECT_TRUE(d.set.run != nullptr && d.set.job == nullptr) << d.name;
      EXPECT_EQ(FindRunOption(d.name, SweepOptionGroups()), &d) << d.name;
      EXPECT_TRUE(FindRunOption(d.name) == nullptr || std::string_view(d.name) == "ramp_time")
          << d.name;
    }
  }
}

TEST(OptionTableTest, NamesAndAliasesAreUniqueAndFiosUnlessIotailsOwn) {
  std::set<std::string_view> seen;
  for (const OptionGroup& group : AllOptionTables()) {
    for (const OptionDef& d : group.rows) {
      EXPECT_TRUE(seen.insert(d.name).second) << d.name;
      EXPECT_EQ(FindRunOption(d.name), &d) << d.name;
      EXPECT_TRUE(IsFioOption(d.name) || kIotailOwn.contains(d.name) || kNewerFio.contains(d.name))
          << d.name << " is neither fio's nor listed as iotail's own";
      EXPECT_NE(std::string_view(d.help), "") << d.name;
      // A row of scope run stores into the run's settings, one of scope job into the job's.
      EXPECT_TRUE(d.scope == OptionScope::kRun ? d.set.run != nullptr && d.set.job == nullptr
                                               : d.set.job != nullptr && d.set.run == nullptr)
          << d.name << ": no setter of its scope";
      for (const char* alias : d.aliases) {
        EXPECT_TRUE(seen.insert(alias).second) << alias;
        EXPECT_EQ(FindRunOption(alias), &d) << alias;
        EXPECT_TRUE(IsFioOption(alias) || kNewerFio.contains(alias))
            << alias << " (an alias of " << d.name << ")";
      }
      if (d.type == ValueType::kChoice) {
        EXPECT_FALSE(d.choices.empty()) << d.name;
      }
    }
  }
  EXPECT_EQ(FindRunOption("no_such_option"), nullptr);
}

TEST(OptionTableTest, ValuesAreParsedByTheRowsType) {
  const OptionDef& iodepth = *FindRunOption("iodepth");
  EXPECT_EQ(ParseOptionValue(iodepth, "iodepth", "32", {}).number, 32);
  EXPECT_THROW(ParseOptionValue(iodepth, "iodepth", "x", {}), stats::UsageError);
  const OptionDef& nrfiles = *FindRunOption("nrfiles");
  EXPECT_THROW(ParseOptionValue(nrfiles, "nr_files", "0", {}), stats::UsageError);
  try {
    ParseOptionValue(nrfiles, "nr_files", "0", {});
  } catch (const stats::UsageError& e) {
    EXPECT_STREQ(e.what(), "--nr_files: expected 1..100000, got '0'");  // named as given
  }
  EXPECT_EQ(ParseOptionValue(*FindRunOption("filesize"), "filesize", "64m", {}).number, 64 << 20);
  EXPECT_EQ(ParseOptionValue(*FindRunOption("runtime"), "runtime", "2", {}).number, 2'000'000'000);
  // fio's thinktime: a bare number is microseconds.
  EXPECT_EQ(ParseOptionValue(*FindRunOption("thinktime"), "thinktime", "250", {}).number, 250'000);
  EXPECT_EQ(ParseOptionValue(*FindRunOption("thinktime"), "thinktime", "2ms", {}).number,
            2'000'000);
  const OptionDef& status = *FindRunOption("status_interval");
  EXPECT_EQ(ParseOptionValue(status, "eta_newline", "250ms", {}).number, 250);
  EXPECT_THROW(ParseOptionValue(status, "eta_newline", "1500us", {}), stats::UsageError);
  const OptionDef& process = *FindRunOption("rate_process");
  EXPECT_EQ(ParseOptionValue(process, "rate_process", "poisson", {}).number, 1);
  try {
    ParseOptionValue(process, "rate_process", "uniform", {});
    ADD_FAILURE() << "uniform accepted";
  } catch (const stats::UsageError& e) {
    EXPECT_STREQ(e.what(), "--rate_process: expected linear or poisson, got 'uniform'");
  }
  EXPECT_THROW(ParseOptionValue(*FindRunOption("direct"), "direct", "2", {}), stats::UsageError);
}

TEST(OptionTableTest, HelpListsEveryOptionWithItsDefaultAndAliases) {
  const std::string help = OptionsHelp();
  for (const OptionGroup& group : AllOptionTables()) {
    EXPECT_NE(help.find(group.title), std::string::npos) << group.title;
    for (const OptionDef& d : group.rows) {
      EXPECT_NE(help.find("--" + std::string(d.name)), std::string::npos) << d.name;
      for (const char* a : d.aliases) {
        EXPECT_NE(help.find("--" + std::string(a)), std::string::npos) << a;
      }
    }
  }
  EXPECT_NE(help.find("--iodepth=N"), std::string::npos);
  EXPECT_NE(help.find("(default 1)"), std::string::npos);
  EXPECT_NE(help.find("[also --readwrite]"), std::string::npos);
  EXPECT_NE(help.find("--rate_process=linear|poisson"), std::string::npos);
}

// A value of free form is shown by what it holds (--filename=FILE[:FILE...], --rate=BYTES[,BYTES]),
// never as a bare placeholder: every row of type text or name carries its label, run's and
// sweep's alike.
TEST(OptionTableTest, EveryFreeFormValueHasItsLabel) {
  std::vector<OptionGroup> groups = AllOptionTables();
  for (const OptionGroup& g : SweepOptionGroups()) groups.push_back(g);
  size_t free_form = 0;
  for (const OptionGroup& group : groups) {
    for (const OptionDef& d : group.rows) {
      if (d.type != ValueType::kText && d.type != ValueType::kName) continue;
      ++free_form;
      EXPECT_STRNE(d.label, "") << d.name;
      EXPECT_NE(OptionValueLabel(d), "V") << d.name;
    }
  }
  EXPECT_GT(free_form, 60u);
  const std::string help = OptionsHelp();
  EXPECT_NE(help.find("--filename=FILE[:FILE...]"), std::string::npos);
  EXPECT_NE(help.find("--rate_iops=IOPS[,IOPS]"), std::string::npos);
  EXPECT_EQ(help.find("=V "), std::string::npos);
}

// docs/run-options.md is generated from the table; regenerate it with
// `build/iotail run --help=markdown > docs/run-options.md` when a row changes.
TEST(OptionTableTest, DocsListEveryOptionAsTheTableSays) {
  const std::filesystem::path doc =
      std::filesystem::path(IOTAIL_SOURCE_DIR) / "docs/run-options.md";
  const std::string expected = OptionsMarkdown();
  EXPECT_EQ(testing::ReadFile(doc), expected)
      << doc << " is out of date: run `build/iotail run --help=markdown > docs/run-options.md`";
  for (const OptionGroup& group : AllOptionTables()) {
    for (const OptionDef& d : group.rows) {
      EXPECT_NE(expected.find("| `" + std::string(d.name) + "` |"), std::string::npos) << d.name;
    }
  }
}

// fio's rate and rate_iops are per job clone and per direction (fio 3.33 with --numjobs=2
// --rw=randrw --rate_iops=100 does 200 reads and 200 writes per second); the help says so, and
// never that the rate is shared over the jobs.
TEST(OptionTableTest, RateHelpSaysPerCloneAndDirection) {
  for (const char* name : {"rate", "rate_iops"}) {
    const std::string help = FindRunOption(name)->help;
    EXPECT_NE(help.find("per clone and direction"), std::string::npos) << name << ": " << help;
    EXPECT_EQ(help.find("all jobs"), std::string::npos) << name << ": " << help;
  }
}

}  // namespace option_table_test
}  // namespace iotail::cli

namespace iotail::cli {
namespace option_table_test {

// fio's command-line switches for job files are rows of the run's like any other (in --help, the
// man page and completion), and --section without a job file is refused rather than running the
// default benchmark.
TEST(OptionTableTest, JobFileSwitchesAreRowsOfTheRun) {
  for (const char* name : {"showcmd", "parse_only", "section"}) {
    const OptionDef* def = FindRunOption(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_EQ(def->scope, OptionScope::kRun) << name;
  }
  const std::string help = OptionsHelp();
  EXPECT_NE(help.find("--section=NAME"), std::string::npos);
  EXPECT_NE(help.find("--parse_only"), std::string::npos);
  std::vector<std::string> args = {"run", "--section=a"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  try {
    (void)ParseRunPlan(argv);
    ADD_FAILURE() << "--section without a job file was accepted";
  } catch (const stats::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--section=a: selects sections of job files"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace option_table_test
}  // namespace iotail::cli
