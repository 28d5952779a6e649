#include "engine/io_pattern.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace iotail::engine {
namespace {

TEST(BlockPermutationTest, EveryBlockExactlyOncePerPass) {
  for (uint64_t n : {1ull, 2ull, 3ull, 5ull, 64ull, 1000ull, 4097ull, 65536ull, 100003ull}) {
    for (uint64_t seed : {0ull, 1ull, 12345ull}) {
      BlockPermutation p(n, seed);
      std::vector<uint8_t> seen(n, 0);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t b = p.Next();
        ASSERT_LT(b, n);
        ASSERT_EQ(seen[b], 0) << "block " << b << " twice, n=" << n;
        seen[b] = 1;
      }
      // The second pass covers every block again.
      std::vector<uint8_t> again(n, 0);
      for (uint64_t i = 0; i < n; ++i) again[p.Next()]++;
      for (uint64_t b = 0; b < n; ++b) ASSERT_EQ(again[b], 1);
    }
  }
}

TEST(BlockPermutationTest, SeedsGiveDifferentOrders) {
  BlockPermutation a(1 << 16, 1), b(1 << 16, 2);
  int same = 0;
  for (int i = 0; i < 1000; ++i) same += a.Next() == b.Next();
  EXPECT_LT(same, 10);
}

TEST(BlockPermutationTest, OrderLooksScrambled) {
  // Successive blocks should not be mostly adjacent (as a plain counter would be).
  BlockPermutation p(1 << 20, 7);
  uint64_t prev = p.Next();
  int adjacent = 0;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t b = p.Next();
    adjacent += (b == prev + 1 || b + 1 == prev);
    prev = b;
  }
  EXPECT_LT(adjacent, 50);
}

JobSpec Spec(RwMode rw) {
  JobSpec s;
  s.rw = rw;
  s.filenames = {"x"};
  return s;
}

TEST(IoPatternTest, SequentialWrapsAndStaysAligned) {
  JobSpec s = Spec(RwMode::kRead);
  IoPattern p(s, 1, 8192, 4 * 4096, 1);
  std::vector<uint64_t> offsets;
  for (int i = 0; i < 8; ++i) offsets.push_back(p.Next().offset);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{8192, 12288, 16384, 20480, 8192, 12288, 16384, 20480}));
}

TEST(IoPatternTest, RandomCoversAllBlocksOfAllFiles) {
  JobSpec s = Spec(RwMode::kRandWrite);
  IoPattern p(s, 3, 0, 100 * 4096, 9);
  std::set<std::pair<uint32_t, uint64_t>> seen;
  for (int i = 0; i < 300; ++i) {
    const IoChoice c = p.Next();
    EXPECT_EQ(c.dir, stats::Direction::kWrite);
    EXPECT_EQ(c.offset % 4096, 0u);
    EXPECT_LT(c.offset, 100u * 4096);
    seen.insert({c.file, c.offset});
  }
  EXPECT_EQ(seen.size(), 300u);
}

TEST(IoPatternTest, RwMixReadShare) {
  JobSpec s = Spec(RwMode::kRandReadWrite);
  s.rwmixread = 70;
  IoPattern p(s, 1, 0, 1 << 20, 3);
  int reads = 0;
  constexpr int kN = 100000;
  for (int i = 0; i < kN; ++i) reads += p.Next().dir == stats::Direction::kRead;
  EXPECT_NEAR(reads / double(kN), 0.70, 0.01);
}

TEST(IoPatternTest, BsSplitSharesAndRangeBounds) {
  JobSpec s = Spec(RwMode::kRandRead);
  s.bssplit = {{4096, 25}, {65536, 75}};
  IoPattern p(s, 1, 0, 1 << 24, 3);
  int small = 0;
  constexpr int kN = 100000;
  for (int i = 0; i < kN; ++i) {
    const IoChoice c = p.Next();
    ASSERT_TRUE(c.bs == 4096 || c.bs == 65536);
    ASSERT_LE(c.offset + c.bs, 1u << 24);
    small += c.bs == 4096;
  }
  EXPECT_NEAR(small / double(kN), 0.25, 0.01);

  JobSpec r = Spec(RwMode::kRandRead);
  r.bs_min = 4096;
  r.bs_max = 16384;
  IoPattern q(r, 1, 0, 1 << 20, 4);
  std::set<uint32_t> sizes;
  for (int i = 0; i < 10000; ++i) {
    const IoChoice c = q.Next();
    ASSERT_EQ(c.bs % 4096, 0u);
    ASSERT_LE(c.offset + c.bs, 1u << 20);
    sizes.insert(c.bs);
  }
  EXPECT_EQ(sizes, (std::set<uint32_t>{4096, 8192, 12288, 16384}));
}

TEST(JobSpecTest, ValidationNamesTheOption) {
  JobSpec s = Spec(RwMode::kRead);
  s.iodepth = 0;
  try {
    s.Validate();
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--iodepth"), std::string::npos);
  }
  JobSpec t = Spec(RwMode::kRead);
  t.bssplit = {{4096, 50}, {8192, 40}};
  EXPECT_THROW(t.Validate(), std::exception);
  JobSpec u = Spec(RwMode::kRead);
  u.time_based = true;
  EXPECT_THROW(u.Validate(), std::exception);
  JobSpec wrap = Spec(RwMode::kRead);  // 4294967295 + 101 wraps to 100 in 32 bits
  wrap.bssplit = {{4096, 4294967295u}, {8192, 101}};
  EXPECT_THROW(wrap.Validate(), std::exception);
  JobSpec direct = Spec(RwMode::kRead);  // every size of a split must suit O_DIRECT, not only the
  direct.direct = true;                  // smallest (6000 failed at run time with EINVAL)
  direct.bssplit = {{4096, 50}, {6000, 50}};
  try {
    direct.Validate();
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--bssplit"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ParseRwMode("randomread"), std::exception);
  EXPECT_EQ(ParseEngineKind("libaio"), EngineKind::kLibaio);
}

TEST(IoPatternTest, SequentialGapSkipsAfterEachIo) {
  JobSpec spec;
  spec.rw = RwMode::kRead;
  spec.bs = 4096;
  spec.rw_modifier = 8192;  // rw=read:8k
  IoPattern p(spec, 1, 0, 1 << 20, 1);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(p.Next().offset, i * 12288);
}

TEST(IoPatternTest, RandomRunsFollowEachRandomOffset) {
  JobSpec spec;
  spec.rw = RwMode::kRandRead;
  spec.bs = 4096;
  spec.rw_modifier = 8;  // rw=randread:8: a new random offset every 8 I/Os
  IoPattern p(spec, 1, 0, 1 << 24, 1);
  int jumps = 0;
  uint64_t last = p.Next().offset;
  for (int i = 1; i < 800; ++i) {
    const uint64_t off = p.Next().offset;
    if (off != last + 4096) {
      ++jumps;
      EXPECT_EQ(i % 8, 0) << "a random offset only every 8th I/O";
    }
    last = off;
  }
  EXPECT_GE(jumps, 95);  // 99 random offsets after the first, nearly all of them jumps
}

}  // namespace
}  // namespace iotail::engine
