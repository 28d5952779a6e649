#include "stats/report/value_log_sink.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <system_error>

#include "stats/core/histogram_layout.h"
#include "stats/util/output_file.h"

namespace iotail::stats {

namespace {

// The value fio prints for the highest non-empty bucket (0 when empty).
uint64_t HistMax(const LatencySnapshot& l) {
  for (size_t i = l.hist.size(); i-- > 0;) {
    if (l.hist[i] != 0) return FineBucketValue(static_cast<uint32_t>(i));
  }
  return 0;
}

uint64_t LatValue(const LatencySnapshot& l, bool max_value) {
  return max_value ? HistMax(l) : static_cast<uint64_t>(std::llround(l.MeanNs()));
}

}  // namespace

ValueLogSink::ValueLogSink(ValueLogSinkOptions options) : options_(std::move(options)) {
  const std::string* prefix[kKinds] = {&options_.bw_prefix, &options_.iops_prefix,
                                       &options_.lat_prefix, &options_.lat_prefix,
                                       &options_.lat_prefix};
  const char* suffix[kKinds] = {"bw", "iops", "slat", "clat", "lat"};
  try {
    for (int k = 0; k < kKinds; ++k) {
      if (prefix[k]->empty()) continue;
      for (int w = 0; w < options_.workers; ++w) {
        File f;
        f.path = fmt::format("{}_{}.{}.log", *prefix[k], suffix[k], options_.first_number + w);
        f.file = OpenRegularForWriting(f.path, "log");
        files_[k].push_back(f);
      }
    }
  } catch (...) {
    for (auto& kind : files_) {
      for (File& f : kind) std::fclose(f.file);
    }
    throw;
  }
}

ValueLogSink::~ValueLogSink() {
  for (auto& kind : files_) {
    for (File& f : kind) {
      if (f.file != nullptr) std::fclose(f.file);
    }
  }
}

void ValueLogSink::Line(File& f, uint64_t time_ms, uint64_t value, Direction d) {
  line_.clear();
  // fio's columns: time, value, ddir, block size, [offset,] priority; a window's are 0.
  // A window's priority is 0 (fio's averaged samples carry none), written 0x0000 with log_prio.
  fmt::format_to(std::back_inserter(line_), "{}, {}, {}, 0, {}{}\n", time_ms, value,
                 DirectionIndex(d), options_.log_offset ? "0, " : "",
                 options_.log_prio ? "0x0000" : "0");
  if (std::fwrite(line_.data(), 1, line_.size(), f.file) != line_.size()) {
    throw std::system_error(errno, std::generic_category(), fmt::format("write '{}'", f.path));
  }
}

void ValueLogSink::OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) {
  const double seconds = static_cast<double>(info.end_ns - info.start_ns) / 1e9;
  // fio's bw and IOPS samples are of whole averaging windows: none for a shorter final one.
  const bool rates = !info.final || options_.period_ms == 0 ||
                     info.end_ns - info.start_ns >= uint64_t{options_.period_ms} * 1'000'000u;
  for (int w = 0; w < options_.workers; ++w) {
    const size_t at = options_.first_delta + static_cast<size_t>(w);
    if (at >= deltas.size()) break;
    for (int di = 0; di < kDirectionCount; ++di) {
      const Direction d = static_cast<Direction>(di);
      const DirectionSnapshot& dir = deltas[at].dirs[di];
      if (dir.ios == 0) continue;  // fio writes the directions seen in the window
      const auto rate = [&](double count) {
        return seconds > 0 ? static_cast<uint64_t>(std::llround(count / seconds)) : 0;
      };
      if (!files_[kBw].empty() && rates) {
        Line(files_[kBw][w], info.time_ms, rate(static_cast<double>(dir.bytes) / 1024), d);
      }
      if (!files_[kIops].empty() && rates) {
        Line(files_[kIops][w], info.time_ms, rate(static_cast<double>(dir.ios)), d);
      }
      if (!files_[kClat].empty()) {
        if (dir.slat.n > 0) {
          Line(files_[kSlat][w], info.time_ms, LatValue(dir.slat, options_.max_value), d);
        }
        Line(files_[kClat][w], info.time_ms, LatValue(dir.clat, options_.max_value), d);
        Line(files_[kLat][w], info.time_ms, LatValue(dir.TotalLatency(), options_.max_value), d);
      }
    }
  }
  for (auto& kind : files_) {
    for (File& f : kind) {
      if (std::fflush(f.file) != 0) {
        throw std::system_error(errno, std::generic_category(), fmt::format("flush '{}'", f.path));
      }
    }
  }
}

void ValueLogSink::Close() {
  for (auto& kind : files_) {
    for (File& f : kind) {
      if (f.file == nullptr) continue;
      std::FILE* file = f.file;
      f.file = nullptr;
      if (std::fclose(file) != 0) {
        throw std::system_error(errno, std::generic_category(), fmt::format("close '{}'", f.path));
      }
    }
  }
}

std::vector<std::string> ValueLogSink::paths() const {
  std::vector<std::string> out;
  for (const auto& kind : files_) {
    for (const File& f : kind) out.push_back(f.path);
  }
  return out;
}

}  // namespace iotail::stats
