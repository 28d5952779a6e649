#include "engine/io_pattern.h"

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
  state_ = SplitMix(x) & mask_;
}

IoPattern::IoPattern(const JobSpec& spec, uint32_t files, uint64_t region_offset,
                     uint64_t region_size, uint64_t seed)
    : rng_(seed ^ 0x5bd1e995u),
      mix_(spec.rw == RwMode::kRead || spec.rw == RwMode::kRandRead     ? 100
           : spec.rw == RwMode::kWrite || spec.rw == RwMode::kRandWrite ? 0
                                                                        : spec.rwmixread),
      trim_(spec.HasTrims()),
      unit_(spec.MinBlockSize()),
      random_(spec.IsRandom()),
      region_offset_(region_offset),
      region_size_(region_size),
      blocks_per_file_(region_size / spec.MinBlockSize() > 0 ? region_size / spec.MinBlockSize()
                                                             : 1),
      total_blocks_(blocks_per_file_ * files),
      permutation_(total_blocks_, seed) {
  for (int d = 0; d < 2; ++d) {
    const JobSpec::BlockSizes z =
        spec.SizesOf(d == 0 ? stats::Direction::kRead : stats::Direction::kWrite);
    Sizes& sz = sizes_[static_cast<size_t>(d)];
    sz.min = z.min;
    sz.steps = z.split == nullptr && z.max > z.min ? z.max / z.min : 1;
    if (z.split != nullptr) {
      uint32_t cumulative = 0;
      for (const auto& s : *z.split) {
        cumulative += s.percent;
        sz.split.push_back({s.bs, cumulative});
      }
    }
  }
  if (spec.rw_modifier != 0) {
    if (random_) {
      run_length_ = spec.rw_modifier;
    } else {
      stride_ = 1 + spec.rw_modifier / unit_;
    }
  }
  if (random_ && (spec.norandommap || spec.random_distribution.kind != DistributionKind::kRandom)) {
    distribution_.emplace(spec.random_distribution, total_blocks_, seed);
  }
}

}  // namespace iotail::engine
