#include "stats/core/percentile_compare.h"

#include <cmath>
#include <limits>
#include <vector>

#include "stats/core/percentile_ci.h"
#include "stats/core/percentiles.h"

namespace iotail::stats {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

CompareVerdict VerdictOf(double lower, double upper) {
  if (lower > 0) return CompareVerdict::kSlower;
  if (upper < 0) return CompareVerdict::kFaster;
  return CompareVerdict::kNoDifference;
}

struct MeanVariance {
  double mean = 0, variance = 0;
};

MeanVariance Moments(std::span<const double> v) {
  MeanVariance m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(v.size() - 1);
  return m;
}

}  // namespace

std::string_view CompareVerdictName(CompareVerdict verdict) {
  constexpr std::string_view kNames[] = {"faster", "slower", "no difference",
                                         "no interval"};  // enum order
  return kNames[static_cast<size_t>(verdict)];
}

PercentileComparison CompareHistograms(std::span<const uint64_t> a, std::span<const uint64_t> b,
                                       const HistogramLayout& layout, double percentile,
                                       double confidence) {
  PercentileComparison c;
  const double p[] = {percentile};
  c.a_ns = ComputePercentiles(a, layout, p, PercentileMethod::kFio)[0];
  c.b_ns = ComputePercentiles(b, layout, p, PercentileMethod::kFio)[0];
  c.diff_ns = c.b_ns - c.a_ns;
  // Each side at 1 - alpha/2: both intervals hold at once with probability >= 1 - alpha.
  const double each = 1 - (1 - confidence) / 2;
  const PercentileInterval ia = PercentileIntervals(a, layout, p, each)[0];
  const PercentileInterval ib = PercentileIntervals(b, layout, p, each)[0];
  if (std::isnan(ia.lower_ns) || std::isnan(ib.lower_ns)) {
    c.lower_ns = c.upper_ns = kNoValue;
    return c;
  }
  c.lower_ns = ib.lower_ns - ia.upper_ns;
  c.upper_ns = ib.upper_ns - ia.lower_ns;
  c.verdict = VerdictOf(c.lower_ns, c.upper_ns);
  return c;
}

PercentileComparison CompareRepetitions(std::span<const double> a, std::span<const double> b,
                                        double confidence) {
  PercentileComparison c;
  if (a.size() < 2 || b.size() < 2) {
    c.a_ns = c.b_ns = c.diff_ns = c.lower_ns = c.upper_ns = kNoValue;
    return c;
  }
  const MeanVariance ma = Moments(a), mb = Moments(b);
  c.a_ns = ma.mean;
  c.b_ns = mb.mean;
  c.diff_ns = mb.mean - ma.mean;
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  const double va = ma.variance / na, vb = mb.variance / nb;
  const double se = std::sqrt(va + vb);
  if (se == 0) {
    // Identical repetitions on both sides (the same file listed twice): the run-to-run spread is
    // unknown, not zero, so there is no interval (issue 38), rather than a certain verdict.
    c.lower_ns = c.upper_ns = kNoValue;
    c.verdict = CompareVerdict::kNoInterval;
    return c;
  } else {
    const double df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
    const double t = StudentTQuantile(1 - (1 - confidence) / 2, df);
    c.lower_ns = c.diff_ns - t * se;
    c.upper_ns = c.diff_ns + t * se;
  }
  c.verdict = VerdictOf(c.lower_ns, c.upper_ns);
  return c;
}

PercentileComparison ComparePrinted(double a_ns, double b_ns) {
  PercentileComparison c;
  c.a_ns = a_ns;
  c.b_ns = b_ns;
  c.diff_ns = b_ns - a_ns;
  c.lower_ns = c.upper_ns = kNoValue;
  c.verdict = CompareVerdict::kNoInterval;
  return c;
}

}  // namespace iotail::stats
