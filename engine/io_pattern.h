// The access pattern of one worker: which direction, block size and offset each I/O gets, pass
// after pass over the worker's region, with fio's rules.
//
// FastRandom is a small seeded generator (xoshiro256**). BlockPermutation visits every block of a
// region exactly once per pass in a scrambled order without a per-block map: a full-period LCG on
// 2^k states, passed through a bijective bit mixer, skipping values >= n (cycle walking; fewer than
// two steps per value on average). IoPattern combines them as fio's rw, rwmixread, bs, bsrange,
// bssplit, blockalign, norandommap and random_generator options describe:
//   - sequential: each I/O starts where the last one ended plus the rw=MODE:N gap (negative goes
//     backwards); a position below the region's start wraps to its end + N, one at or past the
//     file's end wraps to the start (fio's get_next_seq_offset); the pass over a file ends after
//     an I/O that reaches the file's end or when the next offset is past the region;
//   - random with one block size (or lfsr): the permutation, every block once a pass;
//   - random with mixed block sizes (fio's random map): a random block, or the next free one after
//     it, and the I/O trimmed to the free blocks that follow (engine/block_map.h), so a pass does
//     every block exactly once;
//   - norandommap, a blockalign other than the minimum block size or a skewed
//     random_distribution: offsets from a BlockDistribution (engine/random_distribution.h), with
//     replacement; such a pass never ends by itself.
// A random offset is a multiple of its direction's own smallest block size, or of blockalign when
// given (fio's ba[ddir]: bs=4k,64k puts writes on 64 KiB boundaries, reads on 4 KiB ones).
// A block size of a range or split is a multiple of the direction's smallest (fio aligns it down)
// that fits between the offset and the region's end (fio's io_u_fits). PassDone() says when the
// pass has no I/O left; Restart() begins the next (the caller decides whether there is one: fio's
// loops, time_based, io_size); Next() restarts by itself when called at a pass's end.
// Allocation-free after construction; not thread-safe (one per worker).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/block_map.h"
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
  // Back to the first block of the order (the same order again).
  void Reset() { state_ = first_state_; }
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
  uint64_t first_state_;
};

struct IoChoice {
  stats::Direction dir;
  uint32_t bs;
  uint32_t file;    // index into the worker's files
  uint64_t offset;  // byte offset in that file
};

// Where a worker's I/O goes: `files` files, each with the region [offset, offset + size); the
// file's end is file_end bytes after the region's start (>= size; the region's own end when the
// file was laid out for it), which matters to fio's sequential wrap.
struct PatternRegion {
  uint32_t files = 1;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t file_end = 0;  // 0: offset + size
};

class IoPattern {
 public:
  IoPattern(const JobSpec& spec, const PatternRegion& region, uint64_t seed);
  // files: number of files this worker spreads over, each with the region
  // [region_offset, region_offset + region_size), which ends each file.
  IoPattern(const JobSpec& spec, uint32_t files, uint64_t region_offset, uint64_t region_size,
            uint64_t seed)
      : IoPattern(spec, PatternRegion{files, region_offset, region_size, region_size}, seed) {}

  IoChoice Next() { return Next(ChooseDirection()); }
  // The next I/O in direction `dir` (for per-direction rate schedules, which choose directions).
  IoChoice Next(stats::Direction dir) {
    if (plain_blocks_) return NextPlainBlock(dir);
    return NextChosen(dir);
  }

  // The direction of the next I/O (rw, rwmixread), for a caller that adjusts it before Next(dir).
  stats::Direction NextDirection() { return ChooseDirection(); }
  // zonemode=zbd moved the last sequential I/O: the next one continues at `end` (absolute, in the
  // same file), as fio's last_pos.
  void ContinueAt(uint64_t end) {
    if (mode_ == Mode::kSequential) seq_last_ = end - region_offset_;
  }

  // Whether this pass over the region has no I/O left (never, for offsets with replacement).
  bool PassDone() const;
  // How many more I/Os (this one included) the pass is sure to have before PassDone() may become
  // true: the permutation's draws left, unbounded (UINT64_MAX) with replacement, 0 when only
  // PassDone() can tell (sequential, the random map, rw=randread:N runs). The worker's loop asks
  // this once and then skips its per-I/O pass checks for that many I/Os.
  uint64_t SureIosLeft() const;
  // Begins a new pass: the sequential position back at the start, the random map empty, the
  // permutation at its first block.
  void Restart();

  uint64_t blocks_per_file() const { return blocks_per_file_; }

  // How offsets are chosen (see the top of this file).
  enum class Mode { kSequential, kPermutation, kMapped, kDistribution };
  Mode mode() const { return mode_; }

 private:
  static constexpr uint64_t kDone = UINT64_MAX;

  IoChoice NextChosen(stats::Direction dir);
  // The default job's case (plain_blocks_): one file, one block size per direction, offsets that
  // are whole blocks of rand_unit_ (its own alignment) and always fit, no rw=randread:N runs; the
  // block from the permutation or the uniform distribution is the offset, with no division.
  IoChoice NextPlainBlock(stats::Direction dir) {
    uint64_t block;
    if (mode_ == Mode::kPermutation) {
      if (draws_ >= permutation_.blocks()) Restart();
      ++draws_;
      block = permutation_.Next();
    } else {
      block = distribution_->Next();
    }
    return IoChoice{dir, SmallestOf(dir), 0, region_offset_ + block * rand_unit_};
  }
  static bool PlainBlocks(const IoPattern& p);

  stats::Direction ChooseDirection() {
    if (trim_) return stats::Direction::kTrim;
    if (mix_ == 100) return stats::Direction::kRead;
    if (mix_ == 0) return stats::Direction::kWrite;
    return rng_.Below(100) < mix_ ? stats::Direction::kRead : stats::Direction::kWrite;
  }
  // A block size for `dir` that fits in `room` bytes (fio's io_u_fits), a multiple of the
  // direction's smallest; 0 when not even the smallest fits. A single size is returned as is.
  uint32_t ChooseBlockSize(stats::Direction dir, uint64_t room);
  uint32_t SmallestOf(stats::Direction dir) const {
    return sizes_[dir == stats::Direction::kRead ? 0 : 1].min;
  }
  // Sequential: the next offset in file seq_file_ (relative to the region's start) or kDone,
  // after the last I/O ended at seq_last_.
  uint64_t SequentialCandidate() const;
  // Moves seq_file_ past the files whose pass is over.
  void SettleSequential();
  IoChoice NextSequential(stats::Direction dir);
  IoChoice NextRandom(stats::Direction dir);
  // An I/O of `dir` at block `block` of the random space (unit rand_unit_), its size fitted; a
  // random draw (`draw`) is aligned down to the direction's own alignment (dir_align_).
  IoChoice AtBlock(stats::Direction dir, uint64_t block, uint64_t unit, uint64_t per_file,
                   bool draw = true);
  // The I/O that continues the last one (rw=randread:N): where it ended, in the same file.
  IoChoice FollowLast(stats::Direction dir);
  uint64_t UniformBlock() {
    __extension__ typedef unsigned __int128 Wide;
    return static_cast<uint64_t>((static_cast<Wide>(rng_.Next()) * total_blocks_) >> 64);
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
  // fio's ba[ddir]: without blockalign, each direction's random offsets are multiples of its own
  // smallest size (bs=4k,64k: reads at 4 KiB boundaries, writes at 64 KiB ones); with it, of it.
  std::array<uint32_t, 2> dir_align_{};
  Mode mode_;
  uint32_t files_;
  uint64_t region_offset_, region_size_, file_end_;
  uint64_t blocks_per_file_, total_blocks_;  // of unit_ (the random map's and permutation's)
  // Random offsets with replacement come in multiples of rand_unit_ (blockalign): so many a file.
  uint64_t rand_unit_, rand_blocks_per_file_;
  // Sequential: the file and where its last I/O ended (relative to the region; 0: none yet).
  uint32_t seq_file_ = 0;
  uint64_t seq_last_ = 0;
  int64_t seq_gap_ = 0;  // rw=read:N
  // Random: I/Os per random offset (rw=randread:N), and where the last I/O ended.
  uint64_t run_length_ = 0;
  uint64_t run_left_ = 0;
  uint32_t last_file_ = 0;
  uint64_t last_end_ = 0;
  uint64_t draws_ = 0;         // permutation draws this pass
  bool plain_blocks_ = false;  // NextPlainBlock serves every I/O
  BlockPermutation permutation_;
  std::optional<BlockMap> map_;                    // kMapped
  std::optional<BlockDistribution> distribution_;  // kDistribution
};

}  // namespace iotail::engine
