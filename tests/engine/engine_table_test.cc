// The engine table (engine/io/engine_table.h): every row's name parses back to it, what comes from
// the rows (the predicates, which engines take an option, the refusal of an option given to
// another engine, the default benchmark's choice) agrees with fio's engines.
#include "engine/io/engine_table.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/io/io_engine.h"
#include "engine/job_spec.h"
#include "stats/core/errors.h"

namespace iotail::engine {
namespace engine_table_test {

TEST(EngineTableTest, EveryRowsNameAndAliasParseToIt) {
  ASSERT_EQ(EngineTable().size(), 20u);
  for (const EngineRow& row : EngineTable()) {
    EXPECT_EQ(ParseEngineKind(row.name), row.kind) << row.name;
    EXPECT_EQ(EngineKindName(row.kind), row.name);
    EXPECT_EQ(&EngineRowOf(row.kind), &row);
    if (row.alias != nullptr) {
      EXPECT_EQ(ParseEngineKind(row.alias), row.kind) << row.alias;
    }
  }
  EXPECT_EQ(ParseEngineKind("uring"), EngineKind::kIoUring);
  EXPECT_EQ(EngineNames("|").substr(0, 29), "sync|psync|vsync|pvsync|pvsyn");
}

TEST(EngineTableTest, PredicatesComeFromTheTraits) {
  JobSpec spec;
  for (const EngineRow& row : EngineTable()) {
    spec.ioengine = row.kind;
    EXPECT_EQ(spec.Synchronous(), (row.traits & kSynchronousTrait) != 0) << row.name;
    EXPECT_EQ(spec.FileOperations(), (row.traits & kFileOperationTrait) != 0) << row.name;
    // fio's FIO_SYNCIO covers its file-changing and file operation engines too.
    if (spec.ChangesFilesOnly() || spec.FileOperations()) {
      EXPECT_TRUE(spec.Synchronous()) << row.name;
    }
    if (spec.OnDirectories()) {
      EXPECT_TRUE(spec.FileOperations()) << row.name;
    }
    // fio counts issued bytes for the engines that queue (and vsync), none synchronous but vsync.
    if (spec.CountsIssuedBytes() && row.kind != EngineKind::kVsync) {
      EXPECT_FALSE(spec.Synchronous()) << row.name;
    }
  }
  spec.ioengine = EngineKind::kDirStat;
  EXPECT_TRUE(spec.OnDirectories());
  spec.ioengine = EngineKind::kNull;
  EXPECT_FALSE(spec.Synchronous());  // null runs at any depth, as fio's
}

TEST(EngineTableTest, WhichEnginesTakeAnOption) {
  EXPECT_EQ(EnginesTaking(kHipriOption, " or "), "pvsync2 or io_uring");
  EXPECT_EQ(EnginesTaking(kCmdprioOption, ", "), "io_uring, libaio");
  EXPECT_EQ(EnginesTaking(kStatTypeOption, " or "), "filestat or dirstat");
  EXPECT_EQ(EnginesTaking(kNbdOption, " or "), "nbd");
  EXPECT_EQ(OnlyWithEngines("--sqthread_poll", kSqthreadPollOption, EngineKind::kPsync),
            "--sqthread_poll: only with --ioengine=io_uring (not --ioengine=psync)");
}

// The message of the UsageError that spec.Validate() throws ("" if none).
std::string Refusal(const JobSpec& spec) {
  try {
    spec.Validate();
  } catch (const stats::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(EngineTableTest, AnEngineOptionGivenToAnotherEngineIsRefusedNamingTheEnginesThatTakeIt) {
  JobSpec spec;
  spec.filenames = {"f"};
  spec.engine_options.sqthread_poll = true;
  EXPECT_EQ(Refusal(spec), "--sqthread_poll: only with --ioengine=io_uring (not --ioengine=psync)");
  spec.ioengine = EngineKind::kIoUring;
  EXPECT_EQ(Refusal(spec), "");
  spec.engine_options.sqthread_poll = false;
  spec.ioengine = EngineKind::kLibaio;
  spec.engine_options.stat_type_given = true;
  EXPECT_NE(Refusal(spec).find("--stat_type: only with --ioengine=filestat or dirstat (not "
                               "--ioengine=libaio)"),
            std::string::npos);
  spec.engine_options.stat_type_given = false;
  spec.nbd.conns = 2;
  EXPECT_EQ(Refusal(spec), "--nbd_conns: only with --ioengine=nbd (not --ioengine=libaio)");
  spec.nbd.conns = 1;
  spec.uri = "nbd://localhost/";
  EXPECT_EQ(Refusal(spec), "--uri: only with --ioengine=nbd (not --ioengine=libaio)");
}

TEST(EngineTableTest, TheDefaultBenchmarkTakesTheMostPreferredEngineThatRuns) {
  const auto available = AvailableEngines();
  ASSERT_FALSE(available.empty());
  int best = 0;
  for (const EngineRow& row : EngineTable()) {
    if (row.preference != 0 && ProbeEngine(row.kind).empty() &&
        (best == 0 || row.preference < EngineRowOf(static_cast<EngineKind>(best - 1)).preference)) {
      best = static_cast<int>(row.kind) + 1;
    }
  }
  ASSERT_NE(best, 0);  // psync runs everywhere
  EXPECT_EQ(available.front(), static_cast<EngineKind>(best - 1));
  for (const EngineKind k : available) EXPECT_NE(k, EngineKind::kNbd);  // needs a server
}

TEST(EngineTableTest, AnEngineLeftOutOfTheBuildSaysWhichLibraryItLacks) {
  for (const EngineRow& row : EngineTable()) {
    if (ConstructEngine(row.kind) != nullptr) continue;
    ASSERT_NE(row.library, nullptr) << row.name << " has no maker and needs no library";
    EXPECT_EQ(ProbeEngine(row.kind),
              std::string("not built in: iotail was built without ") + row.library);
  }
}

}  // namespace engine_table_test
}  // namespace iotail::engine
