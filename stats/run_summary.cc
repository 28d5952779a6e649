#include "stats/run_summary.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <iterator>

#include "stats/histogram_layout.h"
#include "stats/percentiles.h"
#include "stats/slc.h"

namespace iotail::stats {

namespace {

using Out = std::back_insert_iterator<std::string>;

RecorderSnapshot Aggregate(const RunSummary& s) {
  RecorderSnapshot all;
  for (const JobTotals& j : s.jobs) all.Add(j.totals);
  return all;
}

std::string JsonEscape(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

struct DirFigures {
  double iops = 0, bw_bytes = 0;
  std::vector<double> pct;
  SlcFactors slc;
  bool has_slc = false;
};

DirFigures Figures(const DirectionSnapshot& d, const RunSummary& s) {
  DirFigures f;
  if (s.runtime_s > 0) {
    f.iops = static_cast<double>(d.ios) / s.runtime_s;
    f.bw_bytes = static_cast<double>(d.bytes) / s.runtime_s;
  }
  if (d.ios > 0 && !d.clat.empty()) {
    const HistogramLayout layout = HistogramLayout::Fio3();
    f.pct = ComputePercentiles(std::span<const uint64_t>(d.clat), layout, s.percentiles,
                               PercentileMethod::kFio);
    const std::span<const double> slc_list = SbkSlcPercentiles();
    const std::vector<double> values = ComputePercentiles(std::span<const uint64_t>(d.clat), layout,
                                                          slc_list, PercentileMethod::kFio);
    const double p50[] = {50.0};
    const double median = ComputePercentiles(std::span<const uint64_t>(d.clat), layout, p50,
                                             PercentileMethod::kFio)[0];
    f.slc = ComputeSlc(values, median);
    f.has_slc = true;
  }
  return f;
}

void JsonLatency(Out o, const DirectionSnapshot& d, const DirFigures& f, const RunSummary& s,
                 bool details) {
  const uint64_t min = d.ios ? d.min_ns : 0;
  fmt::format_to(o, "{{\"min\": {}, \"max\": {}, \"mean\": {:.6f}, \"stddev\": {:.6f}, \"N\": {}",
                 min, d.max_ns, d.MeanNs(), d.StddevNs(), d.ios);
  if (details && d.ios > 0) {
    fmt::format_to(o, ", \"percentile\": {{");
    for (size_t i = 0; i < s.percentiles.size(); ++i) {
      fmt::format_to(o, "{}\"{:.6f}\": {}", i ? ", " : "", s.percentiles[i],
                     static_cast<uint64_t>(f.pct[i]));
    }
    fmt::format_to(o, "}}, \"bins\": {{");
    bool first = true;
    for (uint32_t i = 0; i < d.clat.size(); ++i) {
      if (d.clat[i] == 0) continue;
      fmt::format_to(o, "{}\"{}\": {}", first ? "" : ", ", FineBucketValue(i), d.clat[i]);
      first = false;
    }
    fmt::format_to(o, "}}");
  }
  fmt::format_to(o, "}}");
}

void JsonDirection(Out o, const DirectionSnapshot& d, const RunSummary& s) {
  const DirFigures f = Figures(d, s);
  const uint64_t runtime_ms = static_cast<uint64_t>(std::llround(s.runtime_s * 1000));
  fmt::format_to(o,
                 "{{\"io_bytes\": {}, \"io_kbytes\": {}, \"bw_bytes\": {}, \"bw\": {}, "
                 "\"iops\": {:.6f}, \"runtime\": {}, \"total_ios\": {}, \"short_ios\": 0, "
                 "\"drop_ios\": 0, \"slat_ns\": {{\"min\": 0, \"max\": 0, \"mean\": 0.0, "
                 "\"stddev\": 0.0, \"N\": 0}}, \"clat_ns\": ",
                 d.bytes, d.bytes / 1024, static_cast<uint64_t>(f.bw_bytes),
                 static_cast<uint64_t>(f.bw_bytes / 1024), f.iops, d.ios ? runtime_ms : 0, d.ios);
  JsonLatency(o, d, f, s, true);
  fmt::format_to(o, ", \"lat_ns\": ");
  JsonLatency(o, d, f, s, false);
  if (f.has_slc) {
    fmt::format_to(o,
                   ", \"iotail_slc\": {{\"slc1\": {}, \"slc2\": {}, \"slc1_mean\": {:.6f}, "
                   "\"slc2_mean\": {:.6f}}}",
                   f.slc.slc1, f.slc.slc2, f.slc.slc1_mean, f.slc.slc2_mean);
  }
  fmt::format_to(o, "}}");
}

void JsonJob(Out o, const std::string& name, const RecorderSnapshot& t, const RunSummary& s,
             const std::string& options_json) {
  int first_errno = 0;
  for (size_t e = 1; e < t.errors.size() && first_errno == 0; ++e) {
    if (t.errors[e] != 0) first_errno = static_cast<int>(e);
  }
  fmt::format_to(o, "{{\"jobname\": \"{}\", \"groupid\": 0, \"error\": {}, \"eta\": 0, ",
                 JsonEscape(name), first_errno);
  fmt::format_to(o, "\"elapsed\": {}, \"job options\": {}, ",
                 static_cast<uint64_t>(std::ceil(s.runtime_s)), options_json);
  for (int d = 0; d < kDirectionCount; ++d) {
    fmt::format_to(o, "\"{}\": ", DirectionName(static_cast<Direction>(d)));
    JsonDirection(o, t.dirs[d], s);
    fmt::format_to(o, ", ");
  }
  fmt::format_to(o, "\"job_runtime\": {}, \"iotail_errors\": {{\"total\": {}, \"by_errno\": {{",
                 static_cast<uint64_t>(std::llround(s.runtime_s * 1000)), t.TotalErrors());
  bool first = true;
  for (size_t e = 0; e < t.errors.size(); ++e) {
    if (t.errors[e] == 0) continue;
    fmt::format_to(o, "{}\"{}\": {}", first ? "" : ", ", ErrnoName(static_cast<int>(e)),
                   t.errors[e]);
    first = false;
  }
  fmt::format_to(o, "}}}}}}");
}

// Picks a unit for latencies up to max_ns as fio does for text: nsec, usec or msec.
std::pair<const char*, double> Unit(uint64_t max_ns) {
  if (max_ns < 10'000) return {"nsec", 1};
  if (max_ns < 10'000'000) return {"usec", 1e3};
  return {"msec", 1e6};
}

void TextDirection(Out o, Direction dir, const DirectionSnapshot& d, const RunSummary& s) {
  if (d.ios == 0) return;
  const DirFigures f = Figures(d, s);
  const double mib = f.bw_bytes / (1 << 20);
  fmt::format_to(o,
                 "  {}: IOPS={:.0f}, BW={:.1f}MiB/s ({:.1f}MB/s) ({} I/Os, {} bytes in {:.3f}s)\n",
                 DirectionName(dir), f.iops, mib, f.bw_bytes / 1e6, d.ios, d.bytes, s.runtime_s);
  const auto [unit, div] = Unit(d.max_ns);
  fmt::format_to(o, "    clat ({}): min={:.2f}, max={:.2f}, avg={:.2f}, stdev={:.2f}\n", unit,
                 static_cast<double>(d.min_ns) / div, static_cast<double>(d.max_ns) / div,
                 d.MeanNs() / div, d.StddevNs() / div);
  fmt::format_to(o, "    clat percentiles ({}, fio's rule):\n", unit);
  for (size_t i = 0; i < s.percentiles.size(); ++i) {
    const uint64_t v = static_cast<uint64_t>(f.pct[i]);
    const uint64_t shown =
        div == 1 ? v : (div == 1e3 ? (v + 999) / 1000 : (v + 999'999) / 1'000'000);
    fmt::format_to(o, "{}{:6.2f}th=[{:>6}]{}", i % 4 == 0 ? "     | " : "", s.percentiles[i], shown,
                   i + 1 == s.percentiles.size() ? "\n" : (i % 4 == 3 ? ",\n" : ", "));
  }
  if (f.has_slc) {
    fmt::format_to(o, "    SLC1={} SLC2={} (means {:.3f}, {:.3f})\n", f.slc.slc1, f.slc.slc2,
                   f.slc.slc1_mean, f.slc.slc2_mean);
  }
}

void TextErrors(Out o, const RecorderSnapshot& t) {
  if (t.TotalErrors() == 0) {
    fmt::format_to(o, "  errors: none\n");
    return;
  }
  fmt::format_to(o, "  errors: {}", t.TotalErrors());
  for (size_t e = 0; e < t.errors.size(); ++e) {
    if (t.errors[e] != 0) fmt::format_to(o, " {}={}", ErrnoName(static_cast<int>(e)), t.errors[e]);
  }
  fmt::format_to(o, "\n");
}

}  // namespace

std::string ErrnoName(int err) {
  if (err == kMaxCountedErrno - 1) return "other";
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : fmt::format("E{}", err);
}

std::string FormatJsonSummary(const RunSummary& s) {
  std::string out;
  Out o(out);
  std::string options = "{";
  for (size_t i = 0; i < s.options.size(); ++i) {
    options += fmt::format("{}\"{}\": \"{}\"", i ? ", " : "", JsonEscape(s.options[i].first),
                           JsonEscape(s.options[i].second));
  }
  options += "}";
  fmt::format_to(o, "{{\n\"fio version\": \"{}\",\n\"timestamp\": {},\n\"global options\": {},\n",
                 s.version, s.timestamp_s, options);
  fmt::format_to(o, "\"jobs\": [\n");
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    JsonJob(o, s.jobs[j].name, s.jobs[j].totals, s, "{}");
    fmt::format_to(o, "{}\n", j + 1 < s.jobs.size() ? "," : "");
  }
  fmt::format_to(o, "],\n\"iotail_aggregate\": ");
  JsonJob(o, "All jobs", Aggregate(s), s, options);
  fmt::format_to(o, "\n}}\n");
  return out;
}

std::string FormatTextSummary(const RunSummary& s) {
  std::string out;
  Out o(out);
  if (!s.header.empty()) fmt::format_to(o, "{}\n", s.header);
  const RecorderSnapshot all = Aggregate(s);
  fmt::format_to(o, "All jobs ({}):\n", s.jobs.size());
  for (int d = 0; d < kDirectionCount; ++d) {
    TextDirection(o, static_cast<Direction>(d), all.dirs[d], s);
  }
  TextErrors(o, all);
  if (s.jobs.size() > 1) {
    for (const JobTotals& j : s.jobs) {
      fmt::format_to(o, "  {}:", j.name);
      for (int d = 0; d < kDirectionCount; ++d) {
        const DirectionSnapshot& ds = j.totals.dirs[d];
        if (ds.ios == 0) continue;
        fmt::format_to(o, " {} IOPS={:.0f} mean={:.0f}ns", DirectionName(static_cast<Direction>(d)),
                       s.runtime_s > 0 ? static_cast<double>(ds.ios) / s.runtime_s : 0,
                       ds.MeanNs());
      }
      fmt::format_to(o, " errors={}\n", j.totals.TotalErrors());
    }
  }
  return out;
}

}  // namespace iotail::stats
