#include "engine/io_pattern.h"

#include <algorithm>
#include <bit>

namespace iotail::engine {

namespace {

uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

FastRandom::FastRandom(uint64_t seed) {
  for (auto& s : s_) s = SplitMix(seed);
}

BlockPermutation::BlockPermutation(uint64_t blocks, uint64_t seed) : blocks_(blocks) {
  const int bits = blocks <= 2 ? 1 : 64 - std::countl_zero(blocks - 1);
  mask_ = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  shift_ = bits / 2 > 0 ? bits / 2 : 1;
  uint64_t x = seed;
  // Full period mod 2^k (Hull-Dobell): c odd, a = 1 mod 4.
  a_ = ((SplitMix(x) << 2) | 1) & mask_;
  if (bits < 2) a_ = 1;
  c_ = (SplitMix(x) | 1) & mask_;
  m_ = (SplitMix(x) | 1) & mask_;
  state_ = first_state_ = SplitMix(x) & mask_;
}

namespace {

IoPattern::Mode ChooseMode(const JobSpec& spec) {
  using Mode = IoPattern::Mode;
  if (!spec.IsRandom()) return Mode::kSequential;
  if (spec.random_distribution.kind != DistributionKind::kRandom) return Mode::kDistribution;
  if (spec.random_generator == RandomGenerator::kLfsr) return Mode::kPermutation;
  if (spec.NoRandomMap()) return Mode::kDistribution;
  // fio's map trims an I/O to the free blocks after it in its direction's smallest size, never
  // below it: the map (in the job's smallest size) gives that when every direction's smallest is
  // the same and some direction's sizes vary. Directions of different single sizes (bs=4k,64k)
  // take the permutation instead: every block once, no I/O trimmed.
  bool varies = false, same_min = true;
  const uint32_t unit = spec.MinBlockSize();
  for (stats::Direction d : {stats::Direction::kRead, stats::Direction::kWrite}) {
    // Trims take the writes' sizes.
    if (d == stats::Direction::kRead ? !spec.HasReads() : !spec.HasWrites() && !spec.HasTrims()) {
      continue;
    }
    const JobSpec::BlockSizes z = spec.SizesOf(d);
    varies = varies || z.max != z.min;
    same_min = same_min && z.min == unit;
  }
  return varies && same_min ? Mode::kMapped : Mode::kPermutation;
}

// fio's last_block(): random offsets are multiples of `align` such that an I/O of the minimum
// block size still fits in the region.
uint64_t AlignedBlocks(uint64_t region, uint32_t unit, uint32_t align) {
  const uint64_t span = unit > align && region > unit - align ? region - (unit - align) : region;
  return span / align > 0 ? span / align : 1;
}

}  // namespace

IoPattern::IoPattern(const JobSpec& spec, const PatternRegion& region, uint64_t seed)
    : rng_(seed ^ 0x5bd1e995u),
      mix_(spec.rw == RwMode::kRead || spec.rw == RwMode::kRandRead     ? 100
           : spec.rw == RwMode::kWrite || spec.rw == RwMode::kRandWrite ? 0
                                                                        : spec.rwmixread),
      trim_(spec.HasTrims()),
      unit_(spec.MinBlockSize()),
      mode_(ChooseMode(spec)),
      files_(region.files > 0 ? region.files : 1),
      region_offset_(region.offset),
      region_size_(region.size),
      file_end_(region.file_end > region.size ? region.file_end : region.size),
      blocks_per_file_(region.size / unit_ > 0 ? region.size / unit_ : 1),
      total_blocks_(blocks_per_file_ * files_),
      rand_unit_(spec.BlockAlign()),
      rand_blocks_per_file_(AlignedBlocks(region.size, unit_, spec.BlockAlign())),
      permutation_(rand_blocks_per_file_ * files_, seed) {
  for (int d = 0; d < 2; ++d) {
    const JobSpec::BlockSizes z =
        spec.SizesOf(d == 0 ? stats::Direction::kRead : stats::Direction::kWrite);
    Sizes& sz = sizes_[static_cast<size_t>(d)];
    sz.min = z.min;
    dir_align_[static_cast<size_t>(d)] =
        spec.blocks.blockalign != 0 ? spec.blocks.blockalign : z.min;
    sz.steps = z.split == nullptr && z.max > z.min ? z.max / z.min : 1;
    if (z.split != nullptr) {
      uint32_t cumulative = 0;
      for (const auto& s : *z.split) {
        if (s.percent == 0) continue;  // never chosen (fio skips it too)
        cumulative += s.percent;
        // fio aligns a split's sizes down to its smallest (bs_unaligned aside).
        sz.split.push_back({s.bs / z.min * z.min, cumulative});
      }
    }
  }
  if (spec.rw_modifier != 0) {
    if (spec.IsRandom()) {
      run_length_ = static_cast<uint64_t>(spec.rw_modifier);
    } else {
      seq_gap_ = spec.rw_modifier;
    }
  }
  if (mode_ == Mode::kMapped) map_.emplace(total_blocks_);
  if (mode_ == Mode::kDistribution) {
    distribution_.emplace(spec.random_distribution, rand_blocks_per_file_ * files_, seed,
                          rand_unit_, files_);
  }
  plain_blocks_ = PlainBlocks(*this);
}

// Whether NextPlainBlock gives what AtBlock would for every block: one file (no division into
// files), one size per direction (no draw, no fitting), each direction's alignment the block unit
// (no rounding) and the last block's I/O inside the region (never moved back).
bool IoPattern::PlainBlocks(const IoPattern& p) {
  if (p.mode_ != Mode::kPermutation && p.mode_ != Mode::kDistribution) return false;
  if (p.files_ != 1 || p.run_length_ != 0 || p.rand_unit_ == 0) return false;
  const uint64_t last = (p.rand_blocks_per_file_ - 1) * p.rand_unit_;
  for (size_t d = 0; d < 2; ++d) {
    const Sizes& z = p.sizes_[d];
    if (!z.split.empty() || z.steps > 1) return false;
    if (p.rand_unit_ % std::max<uint32_t>(p.dir_align_[d], 1) != 0) return false;
    if (last + z.min > p.region_size_) return false;
  }
  return true;
}

uint64_t IoPattern::SureIosLeft() const {
  if (run_length_ != 0) return 0;
  switch (mode_) {
    case Mode::kPermutation:
      return permutation_.blocks() > draws_ ? permutation_.blocks() - draws_ : 0;
    case Mode::kDistribution:
      return UINT64_MAX;
    case Mode::kSequential:
    case Mode::kMapped:
      return 0;
  }
  return 0;
}

uint32_t IoPattern::ChooseBlockSize(stats::Direction dir, uint64_t room) {
  const Sizes& z = sizes_[dir == stats::Direction::kRead ? 0 : 1];
  if (z.split.empty() && z.steps <= 1) return z.min;
  if (z.min > room) return 0;
  for (int tries = 0; tries < 64; ++tries) {
    if (!z.split.empty()) {
      // The size whose share the draw falls in, or the first one after it that fits (fio).
      const uint32_t r = rng_.Below(100);
      for (const auto& s : z.split) {
        if (r < s.percent && s.bs <= room) return s.bs;  // percent: cumulative here
      }
    } else {
      const uint32_t bs = z.min * (1 + rng_.Below(z.steps));
      if (bs <= room) return bs;
    }
  }
  return z.min;
}

uint64_t IoPattern::SequentialCandidate() const {
  if (seq_last_ == 0) return 0;  // the file's first I/O
  if (seq_last_ >= file_end_) return kDone;
  auto pos = static_cast<int64_t>(seq_last_);
  if (seq_gap_ != 0) {
    pos += seq_gap_;
    if (pos < 0 || static_cast<uint64_t>(pos) >= file_end_) {
      // Backwards below the start: from the region's end + N; forwards past the file: the start.
      pos = seq_gap_ > 0 ? 0 : static_cast<int64_t>(region_size_) + seq_gap_;
      if (pos < 0) return kDone;
    }
  }
  if (static_cast<uint64_t>(pos) >= region_size_) return kDone;
  return static_cast<uint64_t>(pos);
}

bool IoPattern::PassDone() const {
  switch (mode_) {
    case Mode::kSequential:
      return seq_file_ >= files_ || (seq_file_ + 1 == files_ && SequentialCandidate() == kDone);
    case Mode::kPermutation:
      return run_left_ == 0 && draws_ >= permutation_.blocks();
    case Mode::kMapped:
      return run_left_ == 0 && map_->Full();
    case Mode::kDistribution:
      return false;
  }
  return false;
}

void IoPattern::Restart() {
  seq_file_ = 0;
  seq_last_ = 0;
  run_left_ = 0;
  draws_ = 0;
  permutation_.Reset();
  if (map_) map_->Clear();
}

IoChoice IoPattern::NextChosen(stats::Direction dir) {
  if (mode_ == Mode::kSequential) return NextSequential(dir);
  return NextRandom(dir);
}

IoChoice IoPattern::NextSequential(stats::Direction dir) {
  for (int restarts = 0;;) {
    if (seq_file_ >= files_) {
      Restart();
      if (++restarts > 1) break;  // nothing fits anywhere (validated against: a safeguard)
    }
    const uint64_t pos = SequentialCandidate();
    if (pos != kDone) {
      const uint32_t bs = ChooseBlockSize(dir, region_size_ - pos);
      if (bs != 0 && pos + bs <= file_end_) {  // fio: an I/O past the file's end ends the file
        seq_last_ = pos + bs;
        return IoChoice{dir, bs, seq_file_, region_offset_ + pos};
      }
    }
    ++seq_file_;  // this file's pass is over
    seq_last_ = 0;
  }
  return IoChoice{dir, SmallestOf(dir), 0, region_offset_};
}

IoChoice IoPattern::AtBlock(stats::Direction dir, uint64_t block, uint64_t unit, uint64_t per_file,
                            bool draw) {
  IoChoice c;
  c.dir = dir;
  c.file = static_cast<uint32_t>(block / per_file);
  uint64_t off = (block % per_file) * unit;
  const uint64_t align =
      draw ? std::max<uint64_t>(dir_align_[dir == stats::Direction::kRead ? 0 : 1], 1) : 1;
  off = off / align * align;
  const uint64_t room = region_size_ > off ? region_size_ - off : 0;
  c.bs = ChooseBlockSize(dir, room);
  if (c.bs == 0) c.bs = SmallestOf(dir);
  // A single size larger than the room (another direction's smaller one sets the blocks): moved
  // back to end at the region's end.
  const uint64_t back = draw ? align : unit_;
  if (off + c.bs > region_size_) off = (region_size_ - c.bs) / back * back;
  c.offset = region_offset_ + off;
  return c;
}

IoChoice IoPattern::FollowLast(stats::Direction dir) {
  const uint64_t from = last_end_ < region_size_ ? last_end_ : 0;
  return AtBlock(dir, last_file_ * region_size_ + from, 1, region_size_, false);
}

IoChoice IoPattern::NextRandom(stats::Direction dir) {
  if (run_left_ > 0) {  // rw=randread:N: the I/Os after a random offset follow it
    --run_left_;
    IoChoice c = FollowLast(dir);
    last_file_ = c.file;
    last_end_ = c.offset - region_offset_ + c.bs;
    return c;
  }
  IoChoice c;
  switch (mode_) {
    case Mode::kPermutation:
      if (draws_ >= permutation_.blocks()) Restart();
      ++draws_;
      c = AtBlock(dir, permutation_.Next(), rand_unit_, rand_blocks_per_file_);
      break;
    case Mode::kDistribution:
      c = AtBlock(dir, distribution_->Next(), rand_unit_, rand_blocks_per_file_);
      break;
    case Mode::kMapped: {
      if (map_->Full()) Restart();
      // fio's random map: a random block, or the next free one after it; the I/O trimmed to the
      // free blocks that follow (in its file).
      uint64_t block = UniformBlock();
      if (map_->IsSet(block)) block = map_->NextFree(block);
      c = AtBlock(dir, block, unit_, blocks_per_file_);
      const uint64_t first = (c.offset - region_offset_) / unit_ + c.file * blocks_per_file_;
      const uint64_t file_end_block = (uint64_t{c.file} + 1) * blocks_per_file_;
      if (first == block) {
        const uint64_t marked = map_->SetRun(block, (c.bs + unit_ - 1) / unit_, file_end_block);
        if (marked * unit_ < c.bs) c.bs = static_cast<uint32_t>(marked * unit_);
      } else {
        // Moved back (a size larger than the room): the block counts as done, so the pass ends.
        map_->SetRun(block, 1, file_end_block);
      }
      break;
    }
    case Mode::kSequential:
      break;
  }
  run_left_ = run_length_ > 0 ? run_length_ - 1 : 0;
  last_file_ = c.file;
  last_end_ = c.offset - region_offset_ + c.bs;
  return c;
}

}  // namespace iotail::engine
