// Synthetic fio histogram logs for end-to-end tests of the analysis commands: latencies drawn
// from a seeded std::mt19937_64 (fixed, lognormal around a median), counted in fio 3's 1856-bucket
// layout, one line per 1 s interval, written as fio writes them (`time, ddir, bs, c0, ...`).
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "stats/core/histogram_layout.h"

namespace iotail::testing {

struct SyntheticLog {
  double median_ns = 5e6;   // lognormal median
  double sigma = 0.2;       // lognormal shape (0: every latency is the median)
  int intervals = 10;       // 1 s lines
  int per_interval = 1000;  // samples per line
  int ddir = 0;             // 0 read, 1 write
  uint64_t seed = 1;
};

// Writes `log` to `path`; returns the path.
inline std::string WriteSyntheticLog(const std::filesystem::path& path, const SyntheticLog& log) {
  std::mt19937_64 rng(log.seed);
  std::lognormal_distribution<double> dist(std::log(log.median_ns), log.sigma);
  std::ofstream out(path);
  for (int t = 1; t <= log.intervals; ++t) {
    std::vector<uint64_t> counts(stats::kFio3Buckets, 0);
    for (int i = 0; i < log.per_interval; ++i) {
      const double v = log.sigma > 0 ? dist(rng) : log.median_ns;
      ++counts[stats::Fio3BucketIndex(static_cast<uint64_t>(v))];
    }
    out << t * 1000 << ", " << log.ddir << ", 4096";
    for (uint64_t c : counts) out << ", " << c;
    out << '\n';
  }
  return path.string();
}

}  // namespace iotail::testing
