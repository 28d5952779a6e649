#include "stats/report/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/core/percentiles.h"
#include "stats/util/json.h"

namespace iotail::stats {
namespace {

// A latency in the unit, three decimals at most ("-" for NaN, "inf"/"-inf" for open bounds);
// `sign` prints a + before positive values.
std::string Text(double ns, LatencyUnit unit, bool sign = false) {
  if (std::isnan(ns)) return "-";
  if (std::isinf(ns)) return ns > 0 ? "+inf" : "-inf";
  std::string s = sign ? fmt::format("{:+.3f}", ns / NsPerUnit(unit))
                       : fmt::format("{:.3f}", ns / NsPerUnit(unit));
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string Json(double ns, LatencyUnit unit) {
  if (!std::isfinite(ns)) return "null";
  return fmt::format("{}", ns / NsPerUnit(unit));
}

double ChangePct(const PercentileComparison& c) {
  return c.a_ns > 0 ? 100 * c.diff_ns / c.a_ns : std::nan("");
}

std::string_view MethodName(const CompareRow& row) {
  if (row.repetitions) return "t over repetitions";
  return row.printed ? "printed percentiles" : "order statistics";
}

}  // namespace

void WriteCompareText(std::ostream& out, const CompareResult& r, LatencyUnit unit) {
  const std::string u(LatencyUnitName(unit));
  for (const auto& [name, side] : {std::pair{"A", &r.a}, std::pair{"B", &r.b}}) {
    out << fmt::format("# {}: {} ({} repetition(s)){}\n", name, side->input, side->repetitions,
                       side->what.empty() ? "" : ": " + side->what);
  }
  for (const std::string& note : r.notes) out << "# note: " << note << "\n";
  out << fmt::format(
      "# latencies in {}; B - A with its {}% confidence interval; verdict for B against A\n", u,
      fmt::format("{}", r.confidence * 100));
  out << fmt::format("{:<6} {:>7} {:>10} {:>10} {:>10} {:>25} {:>8}  {:<14} {}\n", "dir", "pct",
                     "A", "B", "B-A", "interval of B-A", "change", "verdict", "method");
  for (const CompareRow& row : r.rows) {
    const PercentileComparison& c = row.comparison;
    const double change = ChangePct(c);
    out << fmt::format(
        "{:<6} {:>7} {:>10} {:>10} {:>10} {:>25} {:>8}  {:<14} {}\n", row.dir,
        PercentileLabel(row.percentile), Text(c.a_ns, unit), Text(c.b_ns, unit),
        Text(c.diff_ns, unit, true),
        fmt::format("[{}, {}]", Text(c.lower_ns, unit, true), Text(c.upper_ns, unit, true)),
        std::isnan(change) ? "-" : fmt::format("{:+.1f}%", change), CompareVerdictName(c.verdict),
        row.repetitions
            ? std::string(MethodName(row))
            : fmt::format("{} ({} vs {} samples)", MethodName(row), row.samples_a, row.samples_b));
  }
  if (std::any_of(r.rows.begin(), r.rows.end(),
                  [](const CompareRow& row) { return row.printed; })) {
    out << "# no interval: a side is a JSON summary without histogram bins (fio's "
           "--output-format=json), so only its printed percentiles are compared; json+ or "
           "histogram logs give the interval\n";
  }
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const CompareRow& row) {
        return row.repetitions && std::isnan(row.comparison.lower_ns);
      })) {
    out << "# no interval: the repetitions of each side are identical (no run-to-run spread to "
           "estimate: the same file listed twice?)\n";
  }
  for (const FailOnCheck& check : r.checks) {
    out << fmt::format("fail-on {} ({}): B-A is at least {} {}, allowed {} {}: {}\n", check.target,
                       check.dir, Text(check.diff_lower_ns, unit, true), u,
                       Text(check.allowed_ns, unit, true), u,
                       check.failed ? "FAILED (B significantly worse)" : "ok");
  }
}

void WriteCompareJson(std::ostream& out, const CompareResult& r, LatencyUnit unit) {
  auto side = [](const CompareSideInfo& info) {
    return fmt::format("{{\"input\": {}, \"repetitions\": {}{}}}", JsonString(info.input),
                       info.repetitions,
                       info.what.empty() ? "" : ", \"what\": " + JsonString(info.what));
  };
  std::string s =
      fmt::format("{{\"confidence\": {}, \"unit\": {}, \"a\": {}, \"b\": {}", r.confidence * 100,
                  JsonString(LatencyUnitName(unit)), side(r.a), side(r.b));
  if (!r.notes.empty()) {
    s += ", \"notes\": [";
    for (size_t i = 0; i < r.notes.size(); ++i) s += (i ? ", " : "") + JsonString(r.notes[i]);
    s += "]";
  }
  s += ",\n\"rows\": [";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const CompareRow& row = r.rows[i];
    const PercentileComparison& c = row.comparison;
    const double change = ChangePct(c);
    s += fmt::format(
        "{}\n{{\"dir\": {}, \"percentile\": {}, \"samples_a\": {}, \"samples_b\": {}, "
        "\"method\": {}, \"a\": {}, \"b\": {}, \"diff\": {}, \"diff_lower\": {}, \"diff_upper\": "
        "{}, \"change_pct\": {}, \"verdict\": {}}}",
        i ? "," : "", JsonString(row.dir), row.percentile, row.samples_a, row.samples_b,
        JsonString(MethodName(row)), Json(c.a_ns, unit), Json(c.b_ns, unit), Json(c.diff_ns, unit),
        Json(c.lower_ns, unit), Json(c.upper_ns, unit),
        std::isfinite(change) ? fmt::format("{}", change) : "null",
        JsonString(CompareVerdictName(c.verdict)));
  }
  s += "\n],\n\"fail_on\": [";
  for (size_t i = 0; i < r.checks.size(); ++i) {
    const FailOnCheck& check = r.checks[i];
    s += fmt::format(
        "{}\n{{\"target\": {}, \"dir\": {}, \"allowed\": {}, \"diff_lower\": {}, \"failed\": {}}}",
        i ? "," : "", JsonString(check.target), JsonString(check.dir), Json(check.allowed_ns, unit),
        Json(check.diff_lower_ns, unit), check.failed ? "true" : "false");
  }
  s += "\n]}\n";
  out << s;
}

}  // namespace iotail::stats
