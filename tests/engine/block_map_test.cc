#include "engine/block_map.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace iotail::engine {
namespace block_map_test {

TEST(BlockMapTest, SetRunStopsAtTheFirstDoneBlockAndAtTheEnd) {
  BlockMap map(200);
  EXPECT_EQ(map.SetRun(10, 5, 200), 5u);
  EXPECT_EQ(map.SetRun(7, 10, 200), 3u);  // 7, 8, 9: 10 is done
  EXPECT_EQ(map.SetRun(195, 10, 200), 5u);
  EXPECT_EQ(map.SetRun(60, 10, 64), 4u);  // a file's end
  EXPECT_EQ(map.done(), 17u);
  EXPECT_TRUE(map.IsSet(63));
  EXPECT_FALSE(map.IsSet(64));
}

TEST(BlockMapTest, NextFreeSearchesForwardThenWraps) {
  BlockMap map(10'000);
  map.SetRun(0, 5000, 10'000);
  EXPECT_EQ(map.NextFree(0), 5000u);
  EXPECT_EQ(map.NextFree(4999), 5000u);
  map.SetRun(5000, 5000, 10'000);
  EXPECT_TRUE(map.Full());
  EXPECT_EQ(map.NextFree(0), BlockMap::kNone);
  map.Clear();
  map.SetRun(100, 9900, 10'000);
  EXPECT_EQ(map.NextFree(5000), 0u);  // nothing free after 5000: the first free from the start
  EXPECT_EQ(map.NextFree(99), 99u);
}

TEST(BlockMapTest, FillsUpInRandomOrderAcrossLevels) {
  // 300,000 blocks: four levels. Random runs, each from a random block or the next free one.
  constexpr uint64_t kBlocks = 300'000;
  BlockMap map(kBlocks);
  std::vector<uint8_t> mirror(kBlocks, 0);
  std::mt19937_64 rng(7);
  uint64_t done = 0;
  while (!map.Full()) {
    uint64_t b = rng() % kBlocks;
    if (map.IsSet(b)) b = map.NextFree(b);
    ASSERT_NE(b, BlockMap::kNone);
    ASSERT_EQ(mirror[b], 0);
    // The expected next free block: forward, then from the start.
    const uint64_t n = map.SetRun(b, 1 + rng() % 300, kBlocks);
    ASSERT_GE(n, 1u);
    for (uint64_t i = b; i < b + n; ++i) ASSERT_EQ(mirror[i]++, 0);
    done += n;
  }
  EXPECT_EQ(done, kBlocks);
  for (uint8_t m : mirror) ASSERT_EQ(m, 1);
}

}  // namespace block_map_test
}  // namespace iotail::engine
