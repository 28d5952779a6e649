#include "cli/compare_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/util/option_text.h"

namespace iotail::cli {
namespace {

using stats::UsageError;

// Whether `path` holds JSON (its first non-blank byte is '{'); UsageError when it cannot be read.
bool IsJson(const std::string& path, std::string_view label) {
  std::ifstream in(path);
  if (!in) {
    throw UsageError(fmt::format("{}: cannot read '{}': {}", label, path, std::strerror(errno)));
  }
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  if (!in) throw UsageError(fmt::format("{}: '{}' is empty", label, path));
  return c == '{';
}

// Adds the bins of one direction's latency object ({"bins": {...}}) of a JSON summary.
void AddBins(const nlohmann::json& lat, const char* key, stats::Histogram& hist,
             const std::string& path, std::string_view label) {
  for (const auto& [value, count] : lat["bins"].items()) {
    const auto v = stats::ParseFiniteDouble(value);
    if (!v || *v < 0 || !count.is_number_unsigned()) {
      throw UsageError(fmt::format("{}: '{}': bad bin '{}' in {}", label, path, value, key));
    }
    hist.Add(stats::FineBucketIndex(static_cast<uint64_t>(*v), stats::kWideGroups),
             count.get<uint64_t>());
  }
}

// The percentiles a summary without bins printed for one latency ({"N": .., "percentile":
// {"50.000000": ns, ...}}, fio's --output-format=json).
PrintedPercentiles ReadPrinted(const nlohmann::json& lat, const char* key, const std::string& path,
                               std::string_view label) {
  if (!lat.contains("percentile") || !lat["percentile"].is_object()) {
    throw UsageError(fmt::format(
        "{}: '{}' has neither histogram bins nor printed percentiles for {}: write it with "
        "--output-format=json+ (or compare the run's histogram logs, --write_hist_log)",
        label, path, key));
  }
  PrintedPercentiles printed;
  printed.file = path;
  printed.samples = lat.value("N", uint64_t{0});
  for (const auto& [name, value] : lat["percentile"].items()) {
    const auto p = stats::ParseFiniteDouble(name);
    if (!p || !value.is_number() || value.get<double>() < 0) {
      throw UsageError(fmt::format("{}: '{}': bad percentile '{}' in {}", label, path, name, key));
    }
    printed.values.emplace_back(*p, value.get<double>());
  }
  std::sort(printed.values.begin(), printed.values.end());  // JSON objects come sorted by name
  return printed;
}

RepetitionHistograms LoadJson(const std::vector<std::string>& files, std::string_view label,
                              SummaryLatency latency) {
  const char* key = latency == SummaryLatency::kClat   ? "clat_ns"
                    : latency == SummaryLatency::kLat  ? "lat_ns"
                    : latency == SummaryLatency::kOlat ? "iotail_olat_ns"
                                                       : "recorded_ns";
  std::array<stats::Histogram, stats::kDirectionCount> sums;
  for (auto& h : sums) h.Resize(stats::kWideBuckets);
  RepetitionHistograms rep;
  std::array<int, stats::kDirectionCount> printed_entries{};
  for (const std::string& path : files) {
    nlohmann::json doc;
    try {
      std::ifstream in(path);
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(
          fmt::format("{}: '{}' is not a JSON run summary: {}", label, path, e.what()));
    }
    std::vector<const nlohmann::json*> entries;
    if (latency == SummaryLatency::kRecorded) {
      if (!doc.contains("iotail_replay") || !doc["iotail_replay"].contains("recorded")) {
        throw UsageError(fmt::format(
            "{}: '{}' holds no latencies recorded by a trace (iotail_replay's recorded_ns: an "
            "iotail run --read_iolog of a blktrace dump with its dispatch and completion events)",
            label, path));
      }
      entries.push_back(&doc["iotail_replay"]);
    } else if (doc.contains("iotail_aggregate")) {
      entries.push_back(&doc["iotail_aggregate"]);
    } else if (doc.contains("jobs") && doc["jobs"].is_array()) {
      for (const auto& job : doc["jobs"]) entries.push_back(&job);
    } else {
      throw UsageError(
          fmt::format("{}: '{}' is JSON but not a run summary (no jobs)", label, path));
    }
    for (const nlohmann::json* entry : entries) {
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        const char* name = stats::DirectionName(static_cast<stats::Direction>(d)).data();
        if (!entry->contains(name) || !(*entry)[name].contains(key)) continue;
        const nlohmann::json& lat = (*entry)[name][key];
        if (lat.contains("bins")) {
          AddBins(lat, key, sums[d], path, label);
        } else if (lat.value("N", uint64_t{0}) > 0) {
          rep.printed[d] = ReadPrinted(lat, key, path, label);
          ++printed_entries[d];
        }
      }
    }
  }
  for (int d = 0; d < stats::kDirectionCount; ++d) {
    const char* name = stats::DirectionName(static_cast<stats::Direction>(d)).data();
    if (printed_entries[d] > 1 || (printed_entries[d] == 1 && !sums[d].Empty())) {
      throw UsageError(fmt::format(
          "{}: {} {} entries of '{}' have no histogram bins, and printed percentiles cannot be "
          "added up: give one job per file (fio's --group_reporting) or write them with "
          "--output-format=json+",
          label, printed_entries[d] + (sums[d].Empty() ? 0 : 1), name, fmt::join(files, "+")));
    }
    if (!sums[d].Empty()) rep.dirs[d] = std::move(sums[d]);
  }
  return rep;
}

RepetitionHistograms LoadLogs(const std::vector<std::string>& files, stats::HistogramLayout* layout,
                              std::string_view label) {
  stats::Merger merger(files, stats::MergeOptions{});
  if (merger.Empty()) {
    throw UsageError(
        fmt::format("{}: '{}' holds no histogram records", label, fmt::join(files, "+")));
  }
  merger.Run([](const stats::MergedQuantum&) {});
  *layout = merger.layout();
  RepetitionHistograms rep;
  for (int d = 0; d < stats::kDirectionCount; ++d) {
    const auto dir = static_cast<stats::Direction>(d);
    if (merger.HasDirection(dir) && !merger.Total(dir).Empty()) rep.dirs[d] = merger.Total(dir);
  }
  return rep;
}

// counts (in `from`) in the layout `to` (same generation; coarser or equal, any group count).
stats::Histogram Convert(const stats::Histogram& h, const stats::HistogramLayout& from,
                         const stats::HistogramLayout& to) {
  stats::Histogram out(to.size());
  const uint32_t last_fine = to.fine_size() - 1;
  for (uint32_t i = 0; i < h.size(); ++i) {
    if (h[i] == 0) continue;
    const uint32_t fine = std::min(i << from.coarseness(), last_fine);
    out.Add(fine >> to.coarseness(), h[i]);
  }
  return out;
}

}  // namespace

bool IsJsonSummary(const std::string& path, std::string_view label) { return IsJson(path, label); }

double PrintedPercentiles::At(double percentile, std::string_view label) const {
  std::string list;
  for (const auto& [p, ns] : values) {
    if (std::fabs(p - percentile) < 1e-9) return ns;
    list += fmt::format("{}{}", list.empty() ? "" : ":", p);
  }
  throw UsageError(fmt::format(
      "{}: '{}' printed no p{} (it has no histogram bins, only the percentiles {}): choose "
      "--percentiles among them, or give a json+ summary or histogram logs",
      label, file, percentile, list));
}

CompareSide LoadCompareSide(std::string_view input, std::string_view label,
                            SummaryLatency latency) {
  CompareSide side;
  side.input = std::string(input);
  bool have_layout = false;
  for (const std::string_view rep_text : stats::SplitList(input, ',')) {
    const std::vector<std::string_view> names = stats::SplitList(rep_text, '+');
    const std::vector<std::string> files(names.begin(), names.end());
    size_t json = 0;
    for (const std::string& file : files) {
      if (file.empty()) {
        throw UsageError(
            fmt::format("{}: empty file name in '{}' (expected FILE[+FILE][,...])", label, input));
      }
      json += IsJson(file, label) ? 1 : 0;
    }
    if (json != 0 && json != files.size()) {
      throw UsageError(fmt::format(
          "{}: '{}' mixes JSON summaries and histogram logs in one repetition", label, rep_text));
    }
    stats::HistogramLayout layout = stats::HistogramLayout::Recorded();
    RepetitionHistograms rep =
        json != 0 ? LoadJson(files, label, latency) : LoadLogs(files, &layout, label);
    if (std::all_of(rep.dirs.begin(), rep.dirs.end(), [](const auto& h) { return !h; }) &&
        std::all_of(rep.printed.begin(), rep.printed.end(), [](const auto& p) { return !p; })) {
      throw UsageError(fmt::format("{}: '{}' holds no latency samples", label, rep_text));
    }
    if (have_layout && layout != side.layout) {
      // Repetitions in different layouts: bring them all to the coarser one.
      CompareSide one{side.input, layout, {std::move(rep)}};
      ToCommonLayout(side, one);
      rep = std::move(one.repetitions[0]);
      layout = one.layout;
    }
    side.layout = layout;
    have_layout = true;
    side.repetitions.push_back(std::move(rep));
  }
  return side;
}

void ToCommonLayout(CompareSide& a, CompareSide& b) {
  if (a.layout == b.layout) return;
  if (a.layout.generation() != b.layout.generation()) {
    throw UsageError(
        fmt::format("cannot compare fio 2 logs ('{}') with fio 3 logs ('{}')",
                    a.layout.generation() == stats::FioGeneration::kFio2 ? a.input : b.input,
                    a.layout.generation() == stats::FioGeneration::kFio2 ? b.input : a.input));
  }
  const int coarseness = std::max(a.layout.coarseness(), b.layout.coarseness());
  const int groups = std::min(a.layout.groups(), b.layout.groups());
  const stats::HistogramLayout to = a.layout.generation() == stats::FioGeneration::kFio2
                                        ? stats::HistogramLayout::Fio2(coarseness)
                                        : stats::HistogramLayout::Fio3(coarseness, groups);
  for (CompareSide* side : {&a, &b}) {
    for (RepetitionHistograms& rep : side->repetitions) {
      for (auto& h : rep.dirs) {
        if (h) h = Convert(*h, side->layout, to);
      }
    }
    side->layout = to;
  }
}

}  // namespace iotail::cli
