#include "stats/core/percentile_ci.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace iotail::stats {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNoBound = std::numeric_limits<double>::quiet_NaN();
// The exact binomial is summed over mean +- kWindowSd standard deviations while that is at most
// kMaxExactTerms terms.
constexpr double kWindowSd = 12;
constexpr double kMaxExactTerms = 20000;

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The binomial CDF F(k) = P(B <= k), B ~ binomial(n, p), tabulated exactly over [first, first +
// size) (F is 0 below, 1 above).
struct BinomialTable {
  int64_t first = 0;
  std::vector<double> cdf;
  double At(int64_t k) const {
    if (k < first) return 0;
    if (k - first >= static_cast<int64_t>(cdf.size())) return 1;
    return cdf[static_cast<size_t>(k - first)];
  }
};

BinomialTable ExactBinomial(uint64_t n, double p, double mean, double sd) {
  BinomialTable table;
  const double nd = static_cast<double>(n);
  const int64_t lo =
      std::max<int64_t>(0, static_cast<int64_t>(std::floor(mean - kWindowSd * sd)) - 10);
  const int64_t hi = std::min<int64_t>(static_cast<int64_t>(n),
                                       static_cast<int64_t>(std::ceil(mean + kWindowSd * sd)) + 10);
  table.first = lo;
  table.cdf.reserve(static_cast<size_t>(hi - lo + 1));
  const double log_n1 = std::lgamma(nd + 1);
  const double log_p = std::log(p), log_q = std::log1p(-p);
  double sum = 0;
  for (int64_t k = lo; k <= hi; ++k) {
    const double kd = static_cast<double>(k);
    sum += std::exp(log_n1 - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) + kd * log_p +
                    (nd - kd) * log_q);
    table.cdf.push_back(std::min(sum, 1.0));
  }
  return table;
}

// Regularized incomplete beta I_x(a, b) by its continued fraction (Lentz's method).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double md = m;
    double aa = md * (b - md) * x / ((a + 2 * md - 1) * (a + 2 * md));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + md) * (a + b + md) * x / ((a + 2 * md) * (a + 2 * md + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-15) break;
  }
  return h;
}

double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double StudentTCdf(double t, double df) {
  const double tail = 0.5 * RegularizedBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

// The bucket holding the sample of 1-based rank r (1 <= r), by the cumulative counts.
template <typename Count>
uint32_t BucketOfRank(std::span<const Count> counts, double rank) {
  double sum = 0;
  uint32_t last = 0;
  for (uint32_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == Count{0}) continue;
    sum += static_cast<double>(counts[i]);
    last = i;
    if (sum >= rank - 1e-9) return i;
  }
  return last;
}

}  // namespace

template <typename Count>
std::vector<PercentileInterval> PercentileIntervals(std::span<const Count> counts,
                                                    const HistogramLayout& layout,
                                                    std::span<const double> percentiles,
                                                    double confidence) {
  double total = 0;
  for (Count c : counts) total += static_cast<double>(c);
  const uint64_t n = static_cast<uint64_t>(std::llround(total));
  std::vector<PercentileInterval> out;
  out.reserve(percentiles.size());
  for (double p : percentiles) {
    if (n == 0) {
      out.push_back({kNoBound, kNoBound, 0});
      continue;
    }
    const RankInterval r = OrderStatisticRanks(n, p, confidence);
    PercentileInterval interval;
    interval.coverage = r.coverage;
    interval.lower_ns =
        r.lower_rank == 0 ? 0
                          : layout.LowerNs(BucketOfRank(counts, static_cast<double>(r.lower_rank)));
    interval.upper_ns =
        r.upper_rank > n ? kInf
                         : layout.UpperNs(BucketOfRank(counts, static_cast<double>(r.upper_rank)));
    out.push_back(interval);
  }
  return out;
}

RankInterval OrderStatisticRanks(uint64_t n, double percentile, double confidence) {
  if (n == 0) return {};
  // The extremes are not known exactly from a sample (issue 38): the population's minimum is at
  // most the sample's, with no lower bound, and its maximum at least the sample's, with no upper
  // bound. Treated as exact, one outlier made a difference "significant".
  if (percentile <= 0) return {0, 1, 1};
  if (percentile >= 100) return {n, n + 1, 1};
  const double p = percentile / 100;
  const double alpha = 1 - confidence;
  const double nd = static_cast<double>(n);
  const double mean = nd * p;
  const double sd = std::sqrt(nd * p * (1 - p));
  // k_lo: the largest k with F(k) <= alpha/2 (-1 when none); k_hi: the smallest with F(k) >=
  // 1 - alpha/2. Then l = k_lo + 1 and u = k_hi + 1.
  int64_t k_lo = -1, k_hi = static_cast<int64_t>(n);
  double f_lo = 0, f_hi = 1;
  if (2 * kWindowSd * sd + 20 <= kMaxExactTerms) {
    const BinomialTable table = ExactBinomial(n, p, mean, sd);
    k_lo = table.first - 1;  // F is below 1e-30 there
    for (int64_t k = table.first; k <= static_cast<int64_t>(n); ++k) {
      const double f = table.At(k);
      if (f <= alpha / 2) {
        k_lo = k;
        f_lo = f;
      }
      if (f >= 1 - alpha / 2) {
        k_hi = k;
        f_hi = f;
        break;
      }
    }
  } else {
    auto cdf = [&](int64_t k) { return NormalCdf((static_cast<double>(k) + 0.5 - mean) / sd); };
    k_lo = static_cast<int64_t>(std::floor(mean - 0.5 + sd * NormalQuantile(alpha / 2)));
    k_hi = static_cast<int64_t>(std::ceil(mean - 0.5 + sd * NormalQuantile(1 - alpha / 2)));
    k_lo = std::clamp<int64_t>(k_lo, -1, static_cast<int64_t>(n));
    k_hi = std::clamp<int64_t>(k_hi, 0, static_cast<int64_t>(n));
    f_lo = k_lo < 0 ? 0 : cdf(k_lo);
    f_hi = k_hi >= static_cast<int64_t>(n) ? 1 : cdf(k_hi);
  }
  return {static_cast<uint64_t>(k_lo + 1), static_cast<uint64_t>(k_hi + 1), f_hi - f_lo};
}

template std::vector<PercentileInterval> PercentileIntervals(std::span<const uint64_t>,
                                                             const HistogramLayout&,
                                                             std::span<const double>, double);
template std::vector<PercentileInterval> PercentileIntervals(std::span<const double>,
                                                             const HistogramLayout&,
                                                             std::span<const double>, double);

double NormalQuantile(double q) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    (NormalCdf(mid) < q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double StudentTQuantile(double q, double df) {
  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 400 && hi - lo > 1e-9; ++i) {
    const double mid = (lo + hi) / 2;
    (StudentTCdf(mid, df) < q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace iotail::stats
