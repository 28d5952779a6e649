#include "stats/logs/hist_log_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "stats/core/errors.h"
#include "stats/core/histogram_layout.h"
#include "stats/util/output_file.h"

namespace iotail::stats {

namespace {

// The one definition of a line's format: `time, ddir, bs` then `, count` per column, then '\n'.
template <typename Time>
void AppendHead(fmt::memory_buffer& out, Time time_ms, Direction dir, uint64_t bs) {
  fmt::format_to(std::back_inserter(out), "{}, {}, {}", time_ms, DirectionIndex(dir), bs);
}

void AppendColumn(fmt::memory_buffer& out, uint64_t count) {
  out.push_back(',');
  out.push_back(' ');
  char digits[24];
  char* end = fmt::format_to(digits, "{}", count);
  out.append(digits, end);
}

}  // namespace

void FormatHistLogLine(fmt::memory_buffer& out, uint64_t time_ms, Direction dir, uint64_t bs,
                       std::span<const uint64_t> fine_counts, int coarseness, int groups) {
  AppendHead(out, time_ms, dir, bs);
  const size_t fine = static_cast<size_t>(groups) * kBucketsPerGroup;
  const size_t stride = size_t{1} << coarseness;
  const size_t columns = fine >> coarseness;
  const size_t have = fine_counts.size();
  for (size_t c = 0; c < columns; ++c) {
    uint64_t sum = 0;
    const size_t end = c + 1 == columns ? have : std::min(have, (c + 1) * stride);
    for (size_t j = c * stride; j < end; ++j) sum += fine_counts[j];
    AppendColumn(out, sum);
  }
  out.push_back('\n');
}

void FormatHistLogColumns(fmt::memory_buffer& out, int64_t time_ms, Direction dir, uint64_t bs,
                          std::span<const uint64_t> columns) {
  AppendHead(out, time_ms, dir, bs);
  for (uint64_t count : columns) AppendColumn(out, count);
  out.push_back('\n');
}

HistLogWriter::HistLogWriter(std::string path, int coarseness, int groups)
    : path_(std::move(path)), coarseness_(coarseness), groups_(groups) {
  if (coarseness < 0 || coarseness > kMaxCoarseness) {
    throw UsageError(
        fmt::format("--log_hist_coarseness: expected 0..{}, got {}", kMaxCoarseness, coarseness));
  }
  if (groups != kFio3Groups && groups != kWideGroups) {
    throw UsageError(fmt::format("--log_hist_groups: expected {} or {}, got {}", kFio3Groups,
                                 kWideGroups, groups));
  }
  // A regular file only: never through a symlink, never a device (stats/util/output_file.h).
  file_ = OpenRegularForWriting(path_, "histogram log");
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
}

HistLogWriter::~HistLogWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void HistLogWriter::Write(uint64_t time_ms, Direction dir, uint64_t bs,
                          std::span<const uint64_t> fine_counts) {
  line_.clear();
  FormatHistLogLine(line_, time_ms, dir, bs, fine_counts, coarseness_, groups_);
  const size_t top = static_cast<size_t>(groups_) * kBucketsPerGroup;
  for (size_t i = top; i < fine_counts.size(); ++i) clamped_ += fine_counts[i];
  if (std::fwrite(line_.data(), 1, line_.size(), file_) != line_.size()) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("write histogram log '{}'", path_));
  }
}

void HistLogWriter::Flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("flush histogram log '{}'", path_));
  }
}

void HistLogWriter::Close() {
  if (file_ == nullptr) return;
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("close histogram log '{}'", path_));
  }
}

std::string HistLogWriter::ClatLogPath(const std::string& prefix, int job_number) {
  return fmt::format("{}_clat_hist.{}.log", prefix, job_number);
}

std::string HistLogWriter::LogPath(const std::string& prefix, std::string_view kind,
                                   int job_number) {
  return fmt::format("{}_{}_hist.{}.log", prefix, kind, job_number);
}

std::string HistLogWriter::LatLogPath(const std::string& prefix, int job_number) {
  return fmt::format("{}_lat_hist.{}.log", prefix, job_number);
}

}  // namespace iotail::stats
