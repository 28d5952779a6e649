#include "stats/report/pctiles_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/core/errors.h"
#include "stats/core/latency_figures.h"
#include "stats/util/enum_names.h"
#include "stats/util/json.h"

namespace iotail::stats {
namespace {

constexpr int kTableWidth = 10;

constexpr EnumName<ReportFormat> kReportFormatNames[] = {
    {ReportFormat::kTable, "table"}, {ReportFormat::kCsv, "csv"}, {ReportFormat::kJson, "json"}};

// The short names first (printed), then the long ones fio's scripts use.
constexpr EnumName<LatencyUnit> kLatencyUnitNames[] = {
    {LatencyUnit::kNs, "ns"},   {LatencyUnit::kUs, "us"},   {LatencyUnit::kMs, "ms"},
    {LatencyUnit::kNs, "nsec"}, {LatencyUnit::kUs, "usec"}, {LatencyUnit::kMs, "msec"}};

// Shortest text that reads back as the same double ("1003.52", "12", "0.5").
std::string Exact(double v) { return fmt::format("{}", v); }

// At most three decimals, trailing zeros dropped: for people, in the table.
std::string Readable(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

template <typename Count>
IntervalStats ComputeImpl(std::span<const Count> counts, const HistogramLayout& layout,
                          const ReportOptions& options) {
  IntervalStats row;
  // The SLC list's percentiles of an empty histogram are NaN, its median too: no SLC then.
  LatencyFigures figures = ComputeLatencyFigures(
      counts, layout, options.percentiles, options.slc_percentiles, options.method, &row.stats);
  row.percentiles = std::move(figures.percentiles);
  if (options.ci > 0) {
    row.intervals = PercentileIntervals(counts, layout, options.percentiles, options.ci / 100);
  }
  if (figures.has_slc) row.slc = figures.slc;
  return row;
}

}  // namespace

ReportFormat ParseReportFormat(std::string_view text, std::string_view option) {
  if (const auto format = ValueNamed(kReportFormatNames, text)) return *format;
  throw UsageError(fmt::format("{}: expected table, csv or json, got '{}'", option, text));
}

LatencyUnit ParseLatencyUnit(std::string_view text, std::string_view option) {
  if (const auto unit = ValueNamed(kLatencyUnitNames, text)) return *unit;
  throw UsageError(fmt::format("{}: expected ns, us or ms, got '{}'", option, text));
}

std::string_view LatencyUnitName(LatencyUnit unit) { return NameOf(kLatencyUnitNames, unit); }

double NsPerUnit(LatencyUnit unit) {
  switch (unit) {
    case LatencyUnit::kNs:
      return 1;
    case LatencyUnit::kUs:
      return 1e3;
    case LatencyUnit::kMs:
      return 1e6;
  }
  return 1;
}

IntervalStats ComputeIntervalStats(std::span<const double> counts, const HistogramLayout& layout,
                                   const ReportOptions& options) {
  return ComputeImpl(counts, layout, options);
}

IntervalStats ComputeIntervalStats(std::span<const uint64_t> counts, const HistogramLayout& layout,
                                   const ReportOptions& options) {
  return ComputeImpl(counts, layout, options);
}

PctilesReport::PctilesReport(std::ostream& out, ReportOptions options,
                             std::vector<std::pair<std::string, std::string>> context)
    : out_(out), options_(std::move(options)), context_(std::move(context)) {
  columns_ = {"time_ms", "dir", "samples", "min", "max", "mean"};
  for (double p : options_.percentiles) {
    columns_.push_back(PercentileLabel(p));
    if (options_.ci > 0) {
      columns_.push_back(PercentileLabel(p) + "_lo");
      columns_.push_back(PercentileLabel(p) + "_hi");
    }
  }
  for (const char* c : {"slc1", "slc2", "slc1_mean", "slc2_mean"}) columns_.emplace_back(c);
  if (options_.sla_column) columns_.emplace_back("sla");
}

PctilesReport::~PctilesReport() { WritePending(); }

std::string PctilesReport::Value(double ns) const {
  if (std::isnan(ns)) return options_.format == ReportFormat::kJson ? "null" : "";
  if (std::isinf(ns)) return options_.format == ReportFormat::kJson ? "null" : "inf";
  const double v = ns / NsPerUnit(options_.unit);
  return options_.format == ReportFormat::kTable ? Readable(v) : Exact(v);
}

void PctilesReport::Begin() {
  switch (options_.format) {
    case ReportFormat::kCsv: {
      std::string header;
      for (size_t i = 0; i < columns_.size(); ++i) header += (i ? "," : "") + columns_[i];
      out_ << header << '\n';
      break;
    }
    case ReportFormat::kTable: {
      for (const auto& [key, value] : context_) out_ << "# " << key << ": " << value << '\n';
      out_ << fmt::format(
          "# latencies in {}, percentiles by the '{}' rule, SLC over the {} list "
          "({} percentiles)\n",
          LatencyUnitName(options_.unit), PercentileMethodName(options_.method),
          options_.slc_list_name, options_.slc_percentiles.size());
      if (options_.ci > 0) {
        out_ << fmt::format(
            "# pN_lo, pN_hi: {}% confidence interval of each percentile (order statistics, "
            "bucket edges included)\n",
            Exact(options_.ci));
      }
      std::string header;
      for (const auto& c : columns_) header += fmt::format("{:>{}} ", c, kTableWidth);
      header.pop_back();
      out_ << header << '\n';
      break;
    }
    case ReportFormat::kJson: {
      out_ << "{";
      for (const auto& [key, value] : context_)
        out_ << JsonString(key) << ": " << JsonString(value) << ", ";
      out_ << "\"unit\": " << JsonString(LatencyUnitName(options_.unit))
           << ", \"method\": " << JsonString(PercentileMethodName(options_.method))
           << (options_.ci > 0 ? ", \"ci\": " + Exact(options_.ci) : std::string())
           << ", \"percentiles\": [";
      for (size_t i = 0; i < options_.percentiles.size(); ++i) {
        out_ << (i ? ", " : "") << Exact(options_.percentiles[i]);
      }
      out_ << "], \"slc_list\": " << JsonString(options_.slc_list_name)
           << ", \"slc_percentiles\": [";
      for (size_t i = 0; i < options_.slc_percentiles.size(); ++i) {
        out_ << (i ? ", " : "") << Exact(options_.slc_percentiles[i]);
      }
      out_ << "],\n\"intervals\": [";
      break;
    }
  }
}

void PctilesReport::Row(std::optional<int64_t> time_ms, std::string_view dir,
                        const IntervalStats& row, std::string_view sla) {
  WriteRow(!time_ms.has_value(), FormatRow(time_ms, dir, row, sla));
}

void PctilesReport::WriteRow(bool total, std::string_view text) {
  if (options_.format == ReportFormat::kJson) {
    if (total && !in_totals_) {
      pending_ += "\n],\n\"total\": [";
      in_totals_ = true;
      first_row_ = true;
    }
    pending_ += first_row_ ? "\n" : ",\n";
  }
  first_row_ = false;
  if (pending_.capacity() < kPendingBytes) pending_.reserve(2 * kPendingBytes);  // grown once
  pending_ += text;
  // Rows leave in blocks: a stream on a file or pipe writes 4 KiB at a time, and a system call
  // per 4 KiB cost more than formatting them.
  if (pending_.size() >= kPendingBytes) WritePending();
}

void PctilesReport::WritePending() {
  out_.write(pending_.data(), static_cast<std::streamsize>(pending_.size()));
  pending_.clear();
}

std::string PctilesReport::FormatRow(std::optional<int64_t> time_ms, std::string_view dir,
                                     const IntervalStats& row, std::string_view sla) const {
  const bool json = options_.format == ReportFormat::kJson;
  const bool empty = !(row.stats.samples > 0);
  std::vector<std::string> cells;
  cells.reserve(columns_.size());
  cells.push_back(time_ms ? fmt::format("{}", *time_ms) : (json ? "\"total\"" : "total"));
  cells.push_back(json ? JsonString(dir) : std::string(dir));
  cells.push_back(options_.format == ReportFormat::kTable ? Readable(row.stats.samples)
                                                          : Exact(row.stats.samples));
  cells.push_back(Value(row.stats.min_ns));
  cells.push_back(Value(row.stats.max_ns));
  cells.push_back(Value(row.stats.mean_ns));
  for (size_t i = 0; i < row.percentiles.size(); ++i) {
    cells.push_back(Value(row.percentiles[i]));
    if (options_.ci > 0) {
      cells.push_back(Value(row.intervals[i].lower_ns));
      cells.push_back(Value(row.intervals[i].upper_ns));
    }
  }
  const std::string none = json ? "null" : "";
  if (empty) {
    for (int i = 0; i < 4; ++i) cells.push_back(none);
  } else {
    cells.push_back(fmt::format("{}", row.slc.slc1));
    cells.push_back(fmt::format("{}", row.slc.slc2));
    cells.push_back(options_.format == ReportFormat::kTable ? Readable(row.slc.slc1_mean)
                                                            : Exact(row.slc.slc1_mean));
    cells.push_back(options_.format == ReportFormat::kTable ? Readable(row.slc.slc2_mean)
                                                            : Exact(row.slc.slc2_mean));
  }
  if (options_.sla_column) {
    if (json) {
      cells.push_back(JsonString(sla));
    } else if (options_.format == ReportFormat::kTable) {
      cells.push_back(sla.empty() ? (time_ms && !empty ? "ok" : "") : std::string(sla));
    } else {
      cells.push_back(std::string(sla));
    }
  }

  std::string line;
  switch (options_.format) {
    case ReportFormat::kCsv:
      for (size_t i = 0; i < cells.size(); ++i) {
        if (i) line += ',';
        line += cells[i];
      }
      break;
    case ReportFormat::kTable:
      for (size_t i = 0; i < cells.size(); ++i) {
        if (i) line += ' ';
        line += fmt::format("{:>{}}", cells[i].empty() ? "-" : cells[i], kTableWidth);
      }
      break;
    case ReportFormat::kJson:
      line += '{';
      for (size_t i = 0; i < cells.size(); ++i) {
        line += fmt::format("{}\"{}\": {}", i ? ", " : "", columns_[i], cells[i]);
      }
      line += '}';
      break;
  }
  if (!json) line += '\n';
  return line;
}

void PctilesReport::End(const SlaChecker* sla) {
  WritePending();
  if (options_.format == ReportFormat::kJson) {
    if (!in_totals_) out_ << "\n],\n\"total\": [";
    out_ << "\n]";
    if (sla != nullptr) {
      out_ << ",\n\"sla\": ";
      sla->WriteJson(out_);
    }
    out_ << "}\n";
  } else if (options_.format == ReportFormat::kTable && sla != nullptr) {
    sla->WriteSummary(out_, "time_ms");
  }
  out_.flush();
}

}  // namespace iotail::stats
