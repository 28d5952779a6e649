#include "engine/random_distribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

double Number(const std::string& text, const std::string& whole) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
    throw stats::UsageError(
        fmt::format("--random_distribution: expected a number in '{}', got '{}'", whole, text));
  }
  return v;
}

// log1p(x) / x and expm1(x) / x, accurate near 0.
double Helper1(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x / 3); }
double Helper2(double x) {
  return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3);
}

}  // namespace

DistributionSpec ParseDistribution(const std::string& text, const SizeParser& parse_size) {
  DistributionSpec d;
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "zoned" || kind == "zoned_abs") {
    d.kind = kind == "zoned" ? DistributionKind::kZoned : DistributionKind::kZonedAbs;
    d.zones = ParseAccessZones(rest, d.kind == DistributionKind::kZonedAbs, parse_size);
    return d;
  }
  if (kind == "random") {
    if (!rest.empty()) throw stats::UsageError("--random_distribution: random takes no value");
    return d;
  }
  if (kind == "zipf") {
    d.kind = DistributionKind::kZipf;
  } else if (kind == "pareto") {
    d.kind = DistributionKind::kPareto;
  } else if (kind == "normal") {
    d.kind = DistributionKind::kNormal;
  } else {
    throw stats::UsageError(
        fmt::format("--random_distribution: expected random, zipf:THETA, pareto:H, normal:SIGMA, "
                    "zoned:A/S:... or zoned_abs:A/SIZE:..., got '{}'",
                    text));
  }
  if (rest.empty()) {
    throw stats::UsageError(
        fmt::format("--random_distribution: {} needs a value ({}:N)", kind, kind));
  }
  const size_t second = rest.find(':');
  d.value = Number(rest.substr(0, second), text);
  if (second != std::string::npos) {
    d.center = Number(rest.substr(second + 1), text);
    if (d.center < 0 || d.center > 1) {
      throw stats::UsageError("--random_distribution: the centre is a fraction from 0 to 1");
    }
  }
  if (d.kind == DistributionKind::kZipf && d.value <= 0) {
    throw stats::UsageError("--random_distribution: zipf's theta must be greater than 0");
  }
  if (d.kind == DistributionKind::kPareto && (d.value <= 0 || d.value >= 1)) {
    throw stats::UsageError("--random_distribution: pareto's h must be between 0 and 1");
  }
  if (d.kind == DistributionKind::kNormal && (d.value <= 0 || d.value > 100)) {
    throw stats::UsageError("--random_distribution: normal's sigma is a % from 0 to 100");
  }
  return d;
}

BlockDistribution::BlockDistribution(const DistributionSpec& spec, uint64_t blocks, uint64_t seed,
                                     uint64_t block_bytes, uint64_t files)
    : spec_(spec), blocks_(blocks > 0 ? blocks : 1), state_(seed ^ 0x243f6a8885a308d3ull) {
  const double n = static_cast<double>(blocks_);
  if (spec_.kind == DistributionKind::kZoned || spec_.kind == DistributionKind::kZonedAbs) {
    files_ = files > 0 ? files : 1;
    per_file_ = std::max<uint64_t>(1, blocks_ / files_);
    zones_ =
        ZoneRanges(spec_.zones, spec_.kind == DistributionKind::kZonedAbs, per_file_, block_bytes);
    return;
  }
  if (spec_.center >= 0) {
    offset_ = static_cast<uint64_t>(spec_.center * n) % blocks_;
  } else if (spec_.kind != DistributionKind::kNormal) {
    offset_ = static_cast<uint64_t>(Uniform01() * n) % blocks_;
  }
  if (spec_.kind == DistributionKind::kZipf) {
    s_ = spec_.value;
    h_integral_x1_ = HIntegral(1.5) - 1;
    h_integral_n_ = HIntegral(n + 0.5);
    s_ = 2 - HIntegralInverse(HIntegral(2.5) - H(2));
  }
  if (spec_.kind == DistributionKind::kPareto) {
    pareto_power_ = std::log(spec_.value) / std::log(1 - spec_.value);
  }
}

double BlockDistribution::H(double x) const { return std::exp(-spec_.value * std::log(x)); }

double BlockDistribution::HIntegral(double x) const {
  const double log_x = std::log(x);
  return Helper2((1 - spec_.value) * log_x) * log_x;
}

double BlockDistribution::HIntegralInverse(double x) const {
  double t = x * (1 - spec_.value);
  if (t < -1) t = -1;  // rounding near the end of the range
  return std::exp(Helper1(t) * x);
}

uint64_t BlockDistribution::NextSkewed() {
  const double n = static_cast<double>(blocks_);
  switch (spec_.kind) {
    case DistributionKind::kRandom:
      return Next();
    case DistributionKind::kZoned:
    case DistributionKind::kZonedAbs: {
      // fio: a percent 1..100 picks the zone, then uniform within it (in a file picked uniformly).
      const BlockRange& z =
          zones_[std::min<uint64_t>(99, static_cast<uint64_t>(Uniform01() * 100))];
      const uint64_t file =
          files_ > 1 ? static_cast<uint64_t>(Uniform01() * static_cast<double>(files_)) % files_
                     : 0;
      return file * per_file_ + z.first +
             static_cast<uint64_t>(Uniform01() * static_cast<double>(z.count)) % z.count;
    }
    case DistributionKind::kZipf:
      for (;;) {
        const double u = h_integral_n_ + Uniform01() * (h_integral_x1_ - h_integral_n_);
        const double x = HIntegralInverse(u);
        double k = std::floor(x + 0.5);
        if (k < 1) k = 1;
        if (k > n) k = n;
        if (k - x <= s_ || u >= HIntegral(k + 0.5) - H(k)) {
          return Wrap(static_cast<uint64_t>(k) - 1);
        }
      }
    case DistributionKind::kPareto: {
      const double rank = (n - 1) * std::pow(Uniform01(), pareto_power_);
      // fio's power puts the mass at the top of the range: the hot spot is rank n - 1.
      return Wrap(blocks_ - 1 - std::min(blocks_ - 1, static_cast<uint64_t>(rank)));
    }
    case DistributionKind::kNormal: {
      double g;
      if (has_spare_) {
        g = spare_;
        has_spare_ = false;
      } else {
        const double u1 = Uniform01(), u2 = Uniform01();
        const double r = std::sqrt(-2 * std::log(u1));
        g = r * std::cos(2 * M_PI * u2);
        spare_ = r * std::sin(2 * M_PI * u2);
        has_spare_ = true;
      }
      const double center = spec_.center >= 0 ? spec_.center : 0.5;
      double x = n * center + g * spec_.value / 100 * n;
      if (x < 0) x = 0;
      if (x > n - 1) x = n - 1;
      return static_cast<uint64_t>(x);
    }
  }
  return 0;
}

}  // namespace iotail::engine
