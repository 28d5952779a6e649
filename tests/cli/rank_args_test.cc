// {rank} and {host} in an iotail-mpi command line (the end-to-end tests saw them in the files the
// null engine created; fio's null engine, and now iotail's, creates none).
#include "mpi/rank_args.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace iotail::mpi {
namespace {

TEST(RankArgsTest, RankAndHostAreSubstitutedInEveryArgument) {
  EXPECT_EQ(Substitute("n.{host}.{rank}/{rank}", 3, "b"), "n.b.3/3");
  const RankArgs args =
      MakeRankArgs({"run", "--ioengine=null", "--filename=t.{rank}:{host}", "--size=1m"}, 2, "h");
  EXPECT_NE(std::find(args.run_args.begin(), args.run_args.end(), "--filename=t.2:h"),
            args.run_args.end());
}

}  // namespace
}  // namespace iotail::mpi
