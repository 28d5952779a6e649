// The access pattern of one worker: which direction, block size and offset each I/O gets.
//
// FastRandom is a small seeded generator (xoshiro256**). BlockPermutation visits every block of a
// region exactly once per pass in a scrambled order without a per-block map: a full-period LCG on
// 2^k states, passed through a bijective bit mixer, skipping values >= n (cycle walking; fewer than
// two steps per value on average). IoPattern combines them as fio's rw, rwmixread, bs, bsrange and
// bssplit options describe; with norandommap or a skewed random_distribution, random offsets come
// from a BlockDistribution (engine/random_distribution.h) instead, with replacement. All of it is
// allocation-free after construction; not thread-safe (one per worker).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/job_spec.h"
#include "engine/random_distribution.h"
#include "stats/core/direction.h"

namespace iotail::engine {

class FastRandom {
 public:
  explicit FastRandom(uint64_t seed);
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for n < 2^32).
  uint32_t Below(uint32_t n) {
    return static_cast<uint32_t>(((Next() >> 32) * static_cast<uint64_t>(n)) >> 32);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<uint64_t, 4> s_;
};

class BlockPermutation {
 public:
  // A permutation of [0, blocks) chosen by seed; blocks > 0.
  BlockPermutation(uint64_t blocks, uint64_t seed);
  // The next block; every block appears exactly once in each run of `blocks` calls.
  uint64_t Next() {
    for (;;) {
      state_ = (state_ * a_ + c_) & mask_;
      const uint64_t v = Mix(state_);
      if (v < blocks_) return v;
    }
  }
  uint64_t blocks() const { return blocks_; }

 private:
  uint64_t Mix(uint64_t x) const {
    x ^= x >> shift_;
    x = (x * m_) & mask_;
    x ^= x >> shift_;
    return x;
  }
  uint64_t blocks_;
  uint64_t mask_;
  int shift_;
  uint64_t a_, c_, m_;
  uint64_t state_;
};

struct IoChoice {
  stats::Direction dir;
  uint32_t bs;
  uint32_t file;    // index into the worker's files
  uint64_t offset;  // byte offset in that file
};

class IoPattern {
 public:
  // files: number of files this worker spreads over, each with the region
  // [region_offset, region_offset + region_size).
  IoPattern(const JobSpec& spec, uint32_t files, uint64_t region_offset, uint64_t region_size,
            uint64_t seed);

  IoChoice Next() { return Next(ChooseDirection()); }
  // The next I/O in direction `dir` (for per-direction rate schedules, which choose directions).
  IoChoice Next(stats::Direction dir) {
    IoChoice c;
    c.dir = dir;
    c.bs = ChooseBlockSize(dir);
    uint64_t block;
    if (!random_) {
      block = NextSequential();
    } else if (run_left_ > 0) {  // rw=randread:N: the I/Os after a random offset follow it
      --run_left_;
      block = last_ + 1 == total_blocks_ ? 0 : last_ + 1;
    } else {
      block = distribution_ ? distribution_->Next() : permutation_.Next();
      run_left_ = run_length_ > 0 ? run_length_ - 1 : 0;
    }
    last_ = block;
    c.file = static_cast<uint32_t>(block / blocks_per_file_);
    uint64_t off = (block % blocks_per_file_) * unit_;
    if (off + c.bs > region_size_) off = (region_size_ - c.bs) / unit_ * unit_;
    c.offset = region_offset_ + off;
    return c;
  }
  uint64_t blocks_per_file() const { return blocks_per_file_; }

 private:
  stats::Direction ChooseDirection() {
    if (trim_) return stats::Direction::kTrim;
    if (mix_ == 100) return stats::Direction::kRead;
    if (mix_ == 0) return stats::Direction::kWrite;
    return rng_.Below(100) < mix_ ? stats::Direction::kRead : stats::Direction::kWrite;
  }
  uint32_t ChooseBlockSize(stats::Direction dir) {
    const Sizes& z = sizes_[dir == stats::Direction::kRead ? 0 : 1];
    if (!z.split.empty()) {
      const uint32_t r = rng_.Below(100);
      for (const auto& s : z.split) {
        if (r < s.percent) return s.bs;  // percent holds the cumulative share here
      }
      return z.split.back().bs;
    }
    if (z.steps > 1) return z.min * (1 + rng_.Below(z.steps));
    return z.min;
  }
  uint64_t NextSequential() {
    const uint64_t b = cursor_;
    cursor_ += stride_;  // rw=read:GAP skips GAP after each I/O
    if (cursor_ >= total_blocks_) cursor_ = 0;
    return b;
  }

  FastRandom rng_;
  uint32_t mix_;  // % reads
  bool trim_;     // rw=trim/randtrim: every I/O a trim
  uint32_t unit_;
  // Per direction (reads, writes): a split with cumulative shares, or sizes min * (1..steps).
  struct Sizes {
    std::vector<BlockSizeShare> split;
    uint32_t min = 4096;
    uint32_t steps = 1;
  };
  std::array<Sizes, 2> sizes_;
  bool random_;
  uint64_t region_offset_, region_size_;
  uint64_t blocks_per_file_, total_blocks_;
  uint64_t cursor_ = 0;
  uint64_t stride_ = 1;      // blocks from one sequential I/O to the next
  uint64_t run_length_ = 0;  // random: I/Os per random offset (rw=randread:N)
  uint64_t run_left_ = 0;
  uint64_t last_ = 0;
  BlockPermutation permutation_;
  // Random offsets with replacement or skewed (norandommap, random_distribution): every block
  // once per pass (the permutation) otherwise.
  std::optional<BlockDistribution> distribution_;
};

}  // namespace iotail::engine
