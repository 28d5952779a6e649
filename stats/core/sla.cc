#include "stats/core/sla.h"

#include <fmt/format.h>

#include <optional>

#include "stats/core/errors.h"
#include "stats/util/json.h"
#include "stats/util/option_text.h"

namespace iotail::stats {
namespace {

SlaTarget ParseOne(std::string_view text, std::string_view option) {
  auto fail = [&](std::string_view why) -> SlaTarget {
    throw UsageError(fmt::format(
        "{}: bad target '{}': {} (expected [read|write|trim|all:]p99<=2ms, mean<500us or max<1s)",
        option, text, why));
  };
  SlaTarget target;
  target.text = std::string(text);
  std::string_view rest = text;
  if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
    const std::string_view dir = rest.substr(0, colon);
    if (dir == "all") {
      target.combined = true;
    } else if (auto d = DirectionNamed(dir)) {
      target.direction = d;
    } else {
      return fail(fmt::format("unknown direction '{}'", dir));
    }
    rest.remove_prefix(colon + 1);
  }
  const size_t op = rest.find('<');
  if (op == std::string_view::npos) return fail("no '<=' or '<'");
  const std::string_view metric = rest.substr(0, op);
  target.inclusive = op + 1 < rest.size() && rest[op + 1] == '=';
  std::string_view value = rest.substr(op + (target.inclusive ? 2 : 1));
  if (metric == "mean") {
    target.metric = SlaTarget::Metric::kMean;
  } else if (metric == "max") {
    target.metric = SlaTarget::Metric::kMax;
  } else if (metric.size() > 1 && metric[0] == 'p') {
    const auto p = ParseFiniteDouble(metric.substr(1));
    if (!p || *p < 0 || *p > 100)
      return fail(fmt::format("'{}' is not a percentile p0..p100", metric));
    target.percentile = *p;
  } else {
    return fail(fmt::format("unknown metric '{}'", metric));
  }
  // A unit is required: a bare number could mean any of them (it once meant microseconds).
  std::optional<double> scale;
  for (const auto& [suffix, ns] :
       {std::pair<std::string_view, double>{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}) {
    if (value.ends_with(suffix)) {
      value.remove_suffix(suffix.size());
      scale = ns;
      break;
    }
  }
  if (!scale) {
    return fail(
        fmt::format("the limit '{}' needs a unit: ns, us, ms or s (e.g. {}ms)", value, value));
  }
  const auto limit = ParseFiniteDouble(value);
  if (!limit || *limit <= 0)
    return fail("the limit must be a positive number with ns, us, ms or s");
  target.limit_ns = *limit * *scale;
  return target;
}

}  // namespace

std::vector<SlaTarget> ParseSlaTargets(std::span<const std::string> args, std::string_view option) {
  std::vector<SlaTarget> targets;
  ForEachListItem(args, ",", [&](std::string_view item, const std::string& arg) {
    if (item.empty()) throw UsageError(fmt::format("{}: empty target in '{}'", option, arg));
    targets.push_back(ParseOne(item, option));
  });
  return targets;
}

SlaChecker::SlaChecker(std::vector<SlaTarget> targets, PercentileMethod method)
    : targets_(std::move(targets)), method_(method), results_(targets_.size()) {}

std::string SlaChecker::Check(int64_t time_ms, std::string_view dir_name,
                              std::span<const double> counts, const HistogramLayout& layout) {
  std::string violated;
  std::optional<HistogramStats> stats;
  for (size_t i = 0; i < targets_.size(); ++i) {
    const SlaTarget& t = targets_[i];
    const bool applies =
        dir_name == "all"
            ? t.combined
            : !t.combined && (!t.direction || DirectionName(*t.direction) == dir_name);
    if (!applies) continue;
    if (!stats) stats = ComputeStats(counts, layout, method_);
    if (!(stats->samples > 0)) continue;
    double value = 0;
    switch (t.metric) {
      case SlaTarget::Metric::kMean:
        value = stats->mean_ns;
        break;
      case SlaTarget::Metric::kMax:
        value = stats->max_ns;
        break;
      case SlaTarget::Metric::kPercentile: {
        const double p[] = {t.percentile};
        value = ComputePercentiles(counts, layout, p, method_)[0];
        break;
      }
    }
    Result& r = results_[i];
    ++r.checked;
    if (t.Met(value)) continue;
    ++r.violated;
    r.worst_ns = std::max(r.worst_ns, value);
    if (r.times.size() < kTimesKept) r.times.push_back(time_ms);
    if (!violated.empty()) violated += ' ';
    violated += t.text;
  }
  return violated;
}

bool SlaChecker::AnyViolated() const {
  for (const auto& r : results_) {
    if (r.violated > 0) return true;
  }
  return false;
}

void SlaChecker::WriteSummary(std::ostream& out, std::string_view time_label) const {
  for (size_t i = 0; i < targets_.size(); ++i) {
    const Result& r = results_[i];
    out << fmt::format("SLA {:<20} {:>6} of {:>6} intervals violated", targets_[i].text, r.violated,
                       r.checked);
    if (!latency_.empty()) out << " (" << latency_ << ")";
    if (r.violated > 0) {
      out << fmt::format(", worst {} us, at {} {}{}", r.worst_ns / 1e3, time_label,
                         fmt::join(r.times, " "), r.violated > r.times.size() ? " ..." : "");
    }
    out << '\n';
  }
}

void SlaChecker::WriteJson(std::ostream& out) const {
  out << '[';
  for (size_t i = 0; i < targets_.size(); ++i) {
    const Result& r = results_[i];
    out << fmt::format(
        "{}{{\"target\": {}, \"checked\": {}, \"violated\": {}, \"worst_ns\": {}, "
        "\"first_violation_times_ms\": [{}]{}}}",
        i ? ", " : "", JsonString(targets_[i].text), r.checked, r.violated,
        r.violated ? fmt::format("{}", r.worst_ns) : "null", fmt::join(r.times, ", "),
        latency_.empty() ? std::string() : ", \"latency\": " + JsonString(latency_));
  }
  out << ']';
}

}  // namespace iotail::stats
