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

namespace {

// A row's text, cell by cell, laid out as its format wants (CSV: commas; the table: each cell
// right-aligned in kTableWidth, "-" for an empty one; JSON: "column": value), appended as each
// cell is made: no string per cell (a row was about thirty of them, half its cost).
class RowText {
 public:
  RowText(ReportFormat format, const std::vector<std::string>& columns)
      : format_(format), columns_(columns) {}

  void Cell(std::string_view text) {
    switch (format_) {
      case ReportFormat::kCsv:
        if (cells_ > 0) line_ += ',';
        line_ += text;
        break;
      case ReportFormat::kTable: {
        if (cells_ > 0) line_ += ' ';
        const std::string_view shown = text.empty() ? "-" : text;
        if (std::any_of(shown.begin(), shown.end(), [](char c) { return c & 0x80; })) {
          fmt::format_to(std::back_inserter(line_), "{:>{}}", shown, kTableWidth);  // its width
        } else {
          if (shown.size() < kTableWidth) line_.append(kTableWidth - shown.size(), ' ');
          line_ += shown;
        }
        break;
      }
      case ReportFormat::kJson:
        line_ += cells_ > 0 ? ", \"" : "\"";
        line_ += columns_[cells_];
        line_ += "\": ";
        line_ += text;
        break;
    }
    ++cells_;
  }
  // A number: the shortest text that reads back as the same double ("1003.52", "12", "0.5"), or,
  // `readable` (the table, for people), at most three decimals with trailing zeros dropped.
  void Number(double v, bool readable) {
    fmt::memory_buffer text;
    if (!readable) {
      fmt::format_to(std::back_inserter(text), "{}", v);
      Cell(std::string_view(text.data(), text.size()));
      return;
    }
    fmt::format_to(std::back_inserter(text), "{:.3f}", v);
    std::string_view shown(text.data(), text.size());
    while (!shown.empty() && shown.back() == '0') shown.remove_suffix(1);
    if (!shown.empty() && shown.back() == '.') shown.remove_suffix(1);
    Cell(shown);
  }
  std::string Take() { return std::move(line_); }

 private:
  ReportFormat format_;
  const std::vector<std::string>& columns_;
  std::string line_;
  size_t cells_ = 0;
};

}  // namespace

std::string PctilesReport::FormatRow(std::optional<int64_t> time_ms, std::string_view dir,
                                     const IntervalStats& row, std::string_view sla) const {
  const bool json = options_.format == ReportFormat::kJson;
  const bool table = options_.format == ReportFormat::kTable;
  const bool empty = !(row.stats.samples > 0);
  RowText text(options_.format, columns_);
  // A latency in the chosen unit: an unknown one (NaN) empty and an open bound "inf", both null in
  // JSON.
  auto latency = [&](double ns) {
    if (std::isnan(ns)) return text.Cell(json ? "null" : "");
    if (std::isinf(ns)) return text.Cell(json ? "null" : "inf");
    text.Number(ns / NsPerUnit(options_.unit), table);
  };
  if (time_ms) {
    text.Cell(fmt::format_int(*time_ms).str());
  } else {
    text.Cell(json ? "\"total\"" : "total");
  }
  text.Cell(json ? JsonString(dir) : std::string(dir));
  text.Number(row.stats.samples, table);
  latency(row.stats.min_ns);
  latency(row.stats.max_ns);
  latency(row.stats.mean_ns);
  for (size_t i = 0; i < row.percentiles.size(); ++i) {
    latency(row.percentiles[i]);
    if (options_.ci > 0) {
      latency(row.intervals[i].lower_ns);
      latency(row.intervals[i].upper_ns);
    }
  }
  if (empty) {
    for (int i = 0; i < 4; ++i) text.Cell(json ? "null" : "");
  } else {
    text.Cell(fmt::format_int(row.slc.slc1).str());
    text.Cell(fmt::format_int(row.slc.slc2).str());
    text.Number(row.slc.slc1_mean, table);
    text.Number(row.slc.slc2_mean, table);
  }
  if (options_.sla_column) {
    if (json) {
      text.Cell(JsonString(sla));
    } else if (table) {
      text.Cell(sla.empty() ? (time_ms && !empty ? "ok" : "") : sla);
    } else {
      text.Cell(sla);
    }
  }
  std::string line = text.Take();
  if (json) return '{' + line + '}';
  line += '\n';
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
