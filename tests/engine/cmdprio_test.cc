// fio's cmdprio (engine/cmdprio.h): cmdprio_bssplit's syntax as fio 3.33 reads it, each
// direction's list of priorities (the job's own first), and the share of I/Os each gets.
#include "engine/cmdprio.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "stats/core/errors.h"

namespace iotail::engine {
namespace cmdprio_test {

using stats::Direction;

TEST(CmdPrioTest, ParsesBssplitAsFio) {
  CmdPrioOptions o;
  ParseCmdPrioBssplit("64k/100:1024k/0,1024k/0", o);
  EXPECT_TRUE(o.bssplit_given);
  ASSERT_EQ(o.bssplit[0].size(), 1u);  // zero shares dropped
  EXPECT_EQ(o.bssplit[0][0], (CmdPrioSplit{65536, 100, -1}));
  EXPECT_TRUE(o.bssplit[1].empty());
  // Sorted by block size; class and level as given (class 0 is best effort, as fio's).
  ParseCmdPrioBssplit("1m/30/3/2:64k/25/1/1:64k/75/0/7", o);
  ASSERT_EQ(o.bssplit[1].size(), 3u);
  EXPECT_EQ(o.bssplit[1][0], (CmdPrioSplit{65536, 25, IoprioValue(1, 1)}));
  EXPECT_EQ(o.bssplit[1][1], (CmdPrioSplit{65536, 75, IoprioValue(2, 7)}));
  EXPECT_EQ(o.bssplit[1][2], (CmdPrioSplit{1 << 20, 30, IoprioValue(3, 2)}));
  // fio 3.33 reads four fields: newer fio's fifth (a hint) is ignored; big classes and levels are
  // clamped. A share over 100, an empty value or list is refused (fio clamps the share).
  ParseCmdPrioBssplit("1M/10/2/0/1:2M/100/9/9", o);
  EXPECT_EQ(o.bssplit[0][0], (CmdPrioSplit{1 << 20, 10, IoprioValue(2, 0)}));
  EXPECT_EQ(o.bssplit[0][1], (CmdPrioSplit{2 << 20, 100, IoprioValue(3, 7)}));
  for (const char* bad : {"/50", "4x/50", "4k/50/1", "4k/60:4k/50", "2M/150", "", " ", ":4k/10"}) {
    CmdPrioOptions x;
    EXPECT_THROW(ParseCmdPrioBssplit(bad, x), stats::UsageError) << bad;
  }
  CmdPrioOptions named;
  try {
    ParseCmdPrioBssplit("4k/50:2M/150", named);
    ADD_FAILURE() << "accepted a share of 150%";
  } catch (const stats::UsageError& e) {
    EXPECT_STREQ(e.what(), "--cmdprio_bssplit: '2M/150': a share over 100%");
  }
}

// The job's priority is index 0; a direction without cmdprio has no list; the choice follows the
// shares (percent 0..99 as fio's rand_between(0, 99)).
TEST(CmdPrioTest, ChoosesPrioritiesByShare) {
  CmdPrioOptions o;
  o.percentage = {20, 0};
  const CmdPrio perc(o, IoprioValue(3, 0), true, true);
  ASSERT_EQ(perc.Priorities(Direction::kRead).size(), 2u);
  EXPECT_EQ(perc.Priorities(Direction::kRead)[0], IoprioValue(3, 0));
  EXPECT_EQ(perc.Priorities(Direction::kRead)[1], IoprioValue(1, 0));  // no class: real-time
  EXPECT_TRUE(perc.Priorities(Direction::kWrite).empty());
  int chosen = 0;
  for (uint32_t p = 0; p < 100; ++p) {
    const CmdPrio::Choice c = perc.Choose(Direction::kRead, 4096, p);
    chosen += c.chosen;
    EXPECT_EQ(c.index, c.chosen ? 1 : 0);
  }
  EXPECT_EQ(chosen, 20);
  EXPECT_FALSE(perc.Choose(Direction::kWrite, 4096, 0).chosen);

  CmdPrioOptions b;
  ParseCmdPrioBssplit("64k/25/1/1:64k/75/3/2:1024k/0,1024k/0", b);
  const CmdPrio split(b, 0, true, true);
  const auto prios = split.Priorities(Direction::kRead);
  ASSERT_EQ(prios.size(), 3u);
  std::map<uint16_t, int> seen;
  for (uint32_t p = 0; p < 100; ++p) ++seen[split.Choose(Direction::kRead, 65536, p).ioprio];
  EXPECT_EQ(seen[IoprioValue(1, 1)], 25);
  EXPECT_EQ(seen[IoprioValue(3, 2)], 75);
  EXPECT_FALSE(split.Choose(Direction::kRead, 1 << 20, 0).chosen);  // 1m: no share
  EXPECT_TRUE(split.Priorities(Direction::kWrite).empty());
  EXPECT_FALSE(CmdPrio(b, 0, false, true).Active());  // a write job: the reads' list unused
}

}  // namespace cmdprio_test
}  // namespace iotail::engine
