#include "engine/io_pattern.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace iotail::engine {
namespace io_pattern_test {

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

// n I/Os drawn from p, each of which must end within the region's first `end` bytes.
std::vector<IoChoice> DrawWithin(IoPattern& p, int n, uint64_t end) {
  std::vector<IoChoice> drawn;
  for (int i = 0; i < n; ++i) {
    drawn.push_back(p.Next());
    EXPECT_LE(drawn.back().offset + drawn.back().bs, end) << "draw " << i;
  }
  return drawn;
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
  // With replacement (norandommap), so that no I/O is trimmed to the free blocks of a pass.
  JobSpec s = Spec(RwMode::kRandRead);
  s.norandommap = true;
  s.blocks.bssplit = {{4096, 25}, {65536, 75}};
  IoPattern p(s, 1, 0, 1 << 24, 3);
  int small = 0;
  constexpr int kN = 100000;
  for (const IoChoice& c : DrawWithin(p, kN, 1u << 24)) {
    ASSERT_TRUE(c.bs == 4096 || c.bs == 65536);
    small += c.bs == 4096;
  }
  EXPECT_NEAR(small / double(kN), 0.25, 0.01);

  JobSpec r = Spec(RwMode::kRandRead);
  r.blocks.bs_min = 4096;
  r.blocks.bs_max = 16384;
  IoPattern q(r, 1, 0, 1 << 20, 4);
  std::set<uint32_t> sizes;
  for (const IoChoice& c : DrawWithin(q, 10000, 1u << 20)) {
    ASSERT_EQ(c.bs % 4096, 0u);
    sizes.insert(c.bs);
  }
  EXPECT_EQ(sizes, (std::set<uint32_t>{4096, 8192, 12288, 16384}));
}

TEST(JobSpecTest, ValidationNamesTheOption) {
  JobSpec s = Spec(RwMode::kRead);
  s.queue.iodepth = 0;
  try {
    s.Validate();
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--iodepth"), std::string::npos);
  }
  JobSpec t = Spec(RwMode::kRead);
  t.blocks.bssplit = {{4096, 50}, {8192, 40}};
  EXPECT_THROW(t.Validate(), std::exception);
  // time_based without a runtime: turned off with a note, as fio (not an error).
  JobSpec u = Spec(RwMode::kRead);
  u.time_based = true;
  EXPECT_NE(u.Normalize().find("--time_based needs a --runtime"), std::string::npos);
  EXPECT_FALSE(u.time_based);
  EXPECT_NO_THROW(u.Validate());
  JobSpec wrap = Spec(RwMode::kRead);  // 4294967295 + 101 wraps to 100 in 32 bits
  wrap.blocks.bssplit = {{4096, 4294967295u}, {8192, 101}};
  EXPECT_THROW(wrap.Validate(), std::exception);
  JobSpec direct = Spec(RwMode::kRead);  // every size of a split must suit O_DIRECT, not only the
  direct.direct = true;                  // smallest (6000 failed at run time with EINVAL)
  direct.blocks.bssplit = {{4096, 50}, {6000, 50}};
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
  spec.blocks.bs = 4096;
  spec.rw_modifier = 8192;  // rw=read:8k
  IoPattern p(spec, 1, 0, 1 << 20, 1);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(p.Next().offset, i * 12288);
}

TEST(IoPatternTest, RandomRunsFollowEachRandomOffset) {
  JobSpec spec;
  spec.rw = RwMode::kRandRead;
  spec.blocks.bs = 4096;
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

// The offsets of one job as iotail's worker takes them: until the pass is over or `bytes` are
// issued (fio's size), whichever comes first.
std::vector<uint64_t> OnePass(IoPattern& p, uint64_t bytes) {
  std::vector<uint64_t> out;
  for (uint64_t done = 0; done < bytes && !p.PassDone();) {
    const IoChoice c = p.Next();
    out.push_back(c.offset);
    done += c.bs;
  }
  return out;
}

JobSpec SequentialGap(int64_t gap) {
  JobSpec spec = Spec(RwMode::kRead);
  spec.rw_modifier = gap;
  return spec;
}

// The offsets below are fio 3.33's (write_iolog), for the same jobs:
// fio --name=x --filename=f --bs=4k --ioengine=psync --write_iolog=log --size=S --rw=read:N.
TEST(IoPatternTest, SequentialGapEndsWhereAnIoReachesTheFilesEndAsFio) {
  // size=16m, rw=read:8k: 0, 12k, ..., 16380k; the last one ends at the file's end: 1,366 I/Os.
  JobSpec spec = SequentialGap(8192);
  IoPattern p(spec, 1, 0, 16 << 20, 1);
  const std::vector<uint64_t> offsets = OnePass(p, 16 << 20);
  ASSERT_EQ(offsets.size(), 1366u);
  for (size_t i = 0; i < offsets.size(); ++i) ASSERT_EQ(offsets[i], i * 12288);
  EXPECT_TRUE(p.PassDone());
  p.Restart();
  EXPECT_FALSE(p.PassDone());
  EXPECT_EQ(p.Next().offset, 0u);
}

TEST(IoPatternTest, SequentialGapWrapsWhenTheLastIoEndsShortOfTheFileAsFio) {
  // size=20k, rw=read:8k: 16k + 8k is past the file while 16k is not: back to 0, until size bytes.
  JobSpec spec = SequentialGap(8192);
  IoPattern p(spec, 1, 0, 20480, 1);
  EXPECT_EQ(OnePass(p, 20480), (std::vector<uint64_t>{0, 12288, 0, 12288, 0}));
}

TEST(IoPatternTest, NegativeGapGoesBackwardsAndWrapsToTheEndAsFio) {
  // size=64k, rw=read:-8k: 0, 56k, 52k, ..., 4k, 0 (16 I/Os; 60k is never read).
  JobSpec spec = SequentialGap(-8192);
  IoPattern p(spec, 1, 0, 65536, 1);
  std::vector<uint64_t> expected = {0};
  for (uint64_t k = 56; k >= 4; k -= 4) expected.push_back(k * 1024);
  expected.push_back(0);
  EXPECT_EQ(OnePass(p, 65536), expected);
  // offset=32k size=32k on a 64k file: 32k, 56k, 52k, ..., 32k (relative to the region: its end
  // is the wrap point, as fio's).
  IoPattern q(spec, PatternRegion{1, 32768, 32768, 32768}, 1);
  std::vector<uint64_t> from_offset = {32768};
  for (uint64_t k = 56; k >= 32; k -= 4) from_offset.push_back(k * 1024);
  EXPECT_EQ(OnePass(q, 32768),
            (std::vector<uint64_t>(from_offset.begin(), from_offset.begin() + 8)));
}

TEST(IoPatternTest, SequentialPassEndsAtTheRegionWhenTheFileIsLonger) {
  // fio ends a file's pass when the next offset is past the region, though the file goes on.
  JobSpec spec = SequentialGap(4096);
  IoPattern p(spec, PatternRegion{1, 0, 32768, 1 << 20}, 1);
  EXPECT_EQ(OnePass(p, 32768), (std::vector<uint64_t>{0, 8192, 16384, 24576}));
  EXPECT_TRUE(p.PassDone());
}

TEST(IoPatternTest, MixedBlockSizesWriteEveryBlockExactlyOnceAPass) {
  // fio's random map: a random block (or the next free one), the I/O trimmed to the free blocks.
  JobSpec spec = Spec(RwMode::kRandWrite);
  spec.blocks.bssplit = {{4096, 50}, {65536, 30}, {1 << 20, 20}};
  constexpr uint64_t kRegion = 64 << 20;
  IoPattern p(spec, PatternRegion{2, 8192, kRegion, kRegion}, 5);
  EXPECT_EQ(p.mode(), IoPattern::Mode::kMapped);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<uint8_t> written(2 * kRegion / 4096, 0);
    uint64_t bytes = 0, ios = 0;
    while (!p.PassDone()) {
      const IoChoice c = p.Next();
      ASSERT_EQ(c.bs % 4096, 0u);
      ASSERT_GE(c.offset, 8192u);
      ASSERT_LE(c.offset - 8192 + c.bs, kRegion);
      for (uint64_t b = (c.offset - 8192) / 4096; b < (c.offset - 8192 + c.bs) / 4096; ++b) {
        ASSERT_EQ(written[c.file * (kRegion / 4096) + b]++, 0) << "block written twice";
      }
      bytes += c.bs;
      ++ios;
    }
    EXPECT_EQ(bytes, 2 * kRegion);           // exactly the region, once
    EXPECT_LT(ios, 2 * kRegion / 4096 / 2);  // far fewer I/Os than blocks: sizes were mixed
    p.Restart();
  }
}

TEST(IoPatternTest, EachDirectionsRandomOffsetsAreMultiplesOfItsOwnSmallestSizeAsFio) {
  // fio's blockalign defaults to each direction's own smallest size (init.c: ba[ddir] =
  // min_bs[ddir]): with bs=4k,64k the writes start on 64 KiB boundaries, the reads on 4 KiB ones;
  // with --blockalign, every direction on it.
  constexpr uint64_t kRegion = 16 << 20;
  for (const bool norandommap : {false, true}) {
    JobSpec spec = Spec(RwMode::kRandReadWrite);
    spec.blocks.bs_dir = {4096, 65536};
    spec.norandommap = norandommap;
    IoPattern p(spec, PatternRegion{1, 8192, kRegion, kRegion}, 11);
    uint64_t reads_off_64k = 0, writes = 0;
    for (int i = 0; i < 4000; ++i) {
      const IoChoice c = p.Next();
      ASSERT_LE(c.offset - 8192 + c.bs, kRegion);
      if (c.dir == stats::Direction::kWrite) {
        ASSERT_EQ(c.bs, 65536u);
        ASSERT_EQ((c.offset - 8192) % 65536, 0u) << "write at " << c.offset;
        ++writes;
      } else {
        ASSERT_EQ((c.offset - 8192) % 4096, 0u);
        reads_off_64k += (c.offset - 8192) % 65536 != 0;
      }
    }
    EXPECT_GT(writes, 1000u);
    EXPECT_GT(reads_off_64k, 1000u);  // the reads are not held to the writes' alignment
  }
  JobSpec spec = Spec(RwMode::kRandReadWrite);
  spec.blocks.bs_dir = {4096, 65536};
  spec.blocks.blockalign = 8192;
  IoPattern p(spec, PatternRegion{1, 0, kRegion, kRegion}, 12);
  uint64_t writes_off_64k = 0;
  for (int i = 0; i < 4000; ++i) {
    const IoChoice c = p.Next();
    ASSERT_EQ(c.offset % 8192, 0u);
    writes_off_64k += c.dir == stats::Direction::kWrite && c.offset % 65536 != 0;
  }
  EXPECT_GT(writes_off_64k, 500u);
}

TEST(IoPatternTest, RandomPassEndsAfterEveryBlockAndRestartsTheSameOrder) {
  JobSpec spec = Spec(RwMode::kRandRead);
  IoPattern p(spec, 1, 0, 64 * 4096, 3);
  std::vector<uint64_t> first, second;
  while (!p.PassDone()) first.push_back(p.Next().offset);
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(std::set<uint64_t>(first.begin(), first.end()).size(), 64u);
  p.Restart();
  while (!p.PassDone()) second.push_back(p.Next().offset);
  EXPECT_EQ(first, second);
}

TEST(IoPatternTest, NoRandomMapNeverEndsAPass) {
  JobSpec spec = Spec(RwMode::kRandRead);
  spec.norandommap = true;
  IoPattern p(spec, 1, 0, 16 * 4096, 3);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(p.PassDone());
    p.Next();
  }
}

TEST(IoPatternTest, BlockAlignSetsTheRandomGridAndDropsTheMap) {
  JobSpec spec = Spec(RwMode::kRandRead);
  spec.blocks.blockalign = 8192;  // fio: any blockalign but the minimum bs turns norandommap on
  EXPECT_TRUE(spec.NoRandomMap());
  IoPattern p(spec, 1, 0, 1 << 20, 3);
  EXPECT_EQ(p.mode(), IoPattern::Mode::kDistribution);
  std::set<uint64_t> seen;
  for (const IoChoice& c : DrawWithin(p, 5000, 1u << 20)) {
    ASSERT_EQ(c.offset % 8192, 0u);
    seen.insert(c.offset);
  }
  EXPECT_EQ(seen.size(), 128u);  // the 8k grid, all of it in 5000 draws
  // A smaller alignment: offsets on the 512 grid, an I/O of 4k still inside the region (fio's
  // last_block: the region less 4k - 512).
  spec.blocks.blockalign = 512;
  IoPattern q(spec, 1, 0, 64 * 1024, 4);
  bool unaligned_to_bs = false;
  for (const IoChoice& c : DrawWithin(q, 5000, 64u * 1024)) {
    ASSERT_EQ(c.offset % 512, 0u);
    unaligned_to_bs = unaligned_to_bs || c.offset % 4096 != 0;
  }
  EXPECT_TRUE(unaligned_to_bs);
}

TEST(IoPatternTest, LfsrCoversEveryBlockOnceEvenWithNoRandomMap) {
  JobSpec spec = Spec(RwMode::kRandRead);
  spec.norandommap = true;
  spec.random_generator = RandomGenerator::kLfsr;
  EXPECT_FALSE(spec.NoRandomMap());
  IoPattern p(spec, 1, 0, 100 * 4096, 3);
  EXPECT_EQ(p.mode(), IoPattern::Mode::kPermutation);
  std::set<uint64_t> seen;
  while (!p.PassDone()) seen.insert(p.Next().offset);
  EXPECT_EQ(seen.size(), 100u);
  // Mixed sizes under lfsr: every block is a start once; no I/O is trimmed (fio's LFSR has no map).
  spec.blocks.bssplit = {{4096, 50}, {65536, 50}};
  IoPattern q(spec, 1, 0, 1 << 20, 3);
  EXPECT_EQ(q.mode(), IoPattern::Mode::kPermutation);
  bool large = false;
  while (!q.PassDone()) large = q.Next().bs == 65536 || large;
  EXPECT_TRUE(large);
}

TEST(IoPatternTest, SplitSizesAreAlignedDownToTheSmallestAsFio) {
  // fio: bssplit=4k/50:6k/50 does 4k I/Os only (sizes are aligned down to the smallest).
  JobSpec spec = Spec(RwMode::kRead);
  spec.blocks.bssplit = {{4096, 50}, {6144, 50}};
  IoPattern p(spec, 1, 0, 1 << 20, 3);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p.Next().bs, 4096u);
}

}  // namespace io_pattern_test
}  // namespace iotail::engine
