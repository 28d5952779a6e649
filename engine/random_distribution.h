// BlockDistribution: fio's random_distribution for random I/O over n blocks, as a sampler that
// never allocates after construction: uniform with replacement (norandommap), zipf:theta (ranks
// drawn by Hörmann and Derflinger's rejection-inversion, O(1) per draw for any theta > 0, theta
// != 1 or 1), pareto:h (0 < h < 1; rank = (n - 1) * u^(log h / log(1 - h)), as fio's power), and
// normal:sigma (sigma in % of n, around the centre), and zoned/zoned_abs
// (engine/zoned_distribution.h: a zone by its share of the accesses, then uniform within it, in
// each file). Zipf and pareto ranks count from a hot spot at the centre (fio's optional second
// value, 0..1 of the range; by default a random place chosen by the seed) and wrap around the end,
// so the hottest blocks are contiguous as in fio. Not thread-safe (one per worker).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/zoned_distribution.h"

namespace iotail::engine {

enum class DistributionKind { kRandom, kZipf, kPareto, kNormal, kZoned, kZonedAbs };

struct DistributionSpec {
  DistributionKind kind = DistributionKind::kRandom;
  double value = 0;  // zipf theta, pareto h, normal sigma (% of the range)
  double center =
      -1;  // 0..1 of the range; < 0: zipf/pareto at a place chosen by the seed, normal 0.5
  std::vector<AccessZone> zones;  // zoned, zoned_abs
};

// Parses fio's "random", "zipf:1.2", "pareto:0.9", "normal:10[:0.25]", "zoned:50/5:30/15:20/" and
// "zoned_abs:50/1g:50/4g" (its sizes by parse_size; without one zoned_abs is refused). Throws
// UsageError naming --random_distribution.
DistributionSpec ParseDistribution(const std::string& text, const SizeParser& parse_size = {});

class BlockDistribution {
 public:
  // `blocks` in all, `files` regions of blocks / files each (zoned: per file), blocks of
  // block_bytes (zoned_abs sizes). Throws UsageError when zoned_abs zones exceed a file.
  BlockDistribution(const DistributionSpec& spec, uint64_t blocks, uint64_t seed,
                    uint64_t block_bytes = 1, uint64_t files = 1);
  // The next block in [0, blocks).
  uint64_t Next() {
    if (spec_.kind == DistributionKind::kRandom) {
      // Uniform: the top of the 128-bit product (no division, no floating point).
      __extension__ typedef unsigned __int128 Wide;
      return static_cast<uint64_t>((static_cast<Wide>(Bits()) * blocks_) >> 64);
    }
    return NextSkewed();
  }

 private:
  uint64_t NextSkewed();
  // splitmix64's next 64 bits.
  uint64_t Bits() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform01() {  // (0, 1) from the top 53 bits
    return (static_cast<double>(Bits() >> 11) + 0.5) / 9007199254740992.0;
  }
  uint64_t Wrap(uint64_t rank) const { return (rank + offset_) % blocks_; }
  double H(double x) const;
  double HIntegral(double x) const;
  double HIntegralInverse(double x) const;

  DistributionSpec spec_;
  uint64_t blocks_;
  uint64_t offset_ = 0;
  uint64_t state_;
  // zipf (rejection-inversion)
  double h_integral_x1_ = 0, h_integral_n_ = 0, s_ = 0;
  // pareto
  double pareto_power_ = 0;
  // zoned: the zone of each percent of the accesses, within one file of per_file_ blocks
  std::array<BlockRange, 100> zones_{};
  uint64_t files_ = 1, per_file_ = 1;
  // normal: a second Box-Muller value waiting
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace iotail::engine
