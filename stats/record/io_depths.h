// IoDepthCounts: how deep one worker's queue ran and how it batched, in fio's buckets, for the
// summary's iodepth_level, iodepth_submit and iodepth_complete: per I/O, the number in flight once
// it was submitted (1, 2, 4, 8, 16, 32, >=64: each bucket from its value to below the next); per
// submit call, the I/Os it handed over, and per reap that returned completions, the I/Os it
// returned (0, 4, 8, 16, 32, 64, >=64: each bucket the values above the previous one up to its
// own). A plain value written by its worker alone and read once the worker has stopped.
#pragma once

#include <array>
#include <cstdint>

namespace iotail::stats {

struct IoDepthCounts {
  static constexpr int kBuckets = 7;
  std::array<uint64_t, kBuckets> level{};
  std::array<uint64_t, kBuckets> submit{};
  std::array<uint64_t, kBuckets> complete{};

  static constexpr int LevelIndex(uint64_t depth) {
    int i = 0;
    while (i < kBuckets - 1 && depth >= (uint64_t{1} << (i + 1))) ++i;
    return i;
  }
  static constexpr int BatchIndex(uint64_t n) {
    if (n == 0) return 0;
    int i = 1;
    while (i < kBuckets - 1 && n > (uint64_t{1} << (i + 1))) ++i;
    return i;
  }
  void Add(const IoDepthCounts& o) {
    for (int i = 0; i < kBuckets; ++i) {
      level[i] += o.level[i];
      submit[i] += o.submit[i];
      complete[i] += o.complete[i];
    }
  }
};

}  // namespace iotail::stats
