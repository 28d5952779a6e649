#include "stats/report/slow_io_log.h"

#include <fmt/format.h>

#include <cerrno>
#include <system_error>

#include "stats/util/output_file.h"

namespace iotail::stats {

namespace {

constexpr const char* kHeader =
    "time_ms,direction,file,offset,length,depth,cpu,latency_ns,joined,schedule_ns,submit_ns,"
    "queue_ns,device_ns,delivery_ns\n";

// A file name as one CSV field: quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string SlowIoLog::PathOf(const std::string& prefix, int number) {
  return fmt::format("{}_slowest.{}.log", prefix, number);
}

SlowIoLog::SlowIoLog(SlowIoLogOptions options) : options_(std::move(options)) {
  for (size_t w = 0; w < options_.files.size(); ++w) {
    paths_.push_back(PathOf(options_.prefix, options_.first_number + static_cast<int>(w)));
    files_.push_back(OpenRegularForWriting(paths_.back(), "--explain_slowest"));
    if (std::fputs(kHeader, files_.back()) < 0) {
      throw std::system_error(errno, std::generic_category(), "write '" + paths_.back() + "'");
    }
  }
}

SlowIoLog::~SlowIoLog() {
  for (std::FILE* f : files_) {
    if (f != nullptr) std::fclose(f);
  }
}

void SlowIoLog::OnSlowIos(const IntervalInfo&, std::span<const SlowIo> rows) {
  for (const SlowIo& row : rows) {
    const int w = row.worker - options_.first_number;
    if (w < 0 || static_cast<size_t>(w) >= files_.size() || files_[w] == nullptr) continue;
    const std::vector<std::string>& names = options_.files[w];
    const std::string file = row.file < names.size() ? CsvField(names[row.file]) : "";
    std::string line =
        fmt::format("{},{},{},{},{},{},{},{},{},{}", row.time_ms, DirectionName(row.dir), file,
                    row.offset, row.length, row.depth, row.cpu, row.latency_ns, row.joined ? 1 : 0,
                    row.stages[static_cast<size_t>(Stage::kSchedule)]);
    for (size_t s = 1; s < kStageCount; ++s) {
      line += row.joined ? fmt::format(",{}", row.stages[s]) : std::string(",");
    }
    line += '\n';
    if (std::fputs(line.c_str(), files_[w]) < 0) {
      throw std::system_error(errno, std::generic_category(), "write '" + paths_[w] + "'");
    }
  }
  for (size_t w = 0; w < files_.size(); ++w) {
    if (files_[w] != nullptr && std::fflush(files_[w]) != 0) {
      throw std::system_error(errno, std::generic_category(), "write '" + paths_[w] + "'");
    }
  }
}

void SlowIoLog::Close() {
  for (size_t w = 0; w < files_.size(); ++w) {
    if (files_[w] == nullptr) continue;
    const int rc = std::fclose(files_[w]);
    files_[w] = nullptr;
    if (rc != 0)
      throw std::system_error(errno, std::generic_category(), "close '" + paths_[w] + "'");
  }
}

}  // namespace iotail::stats
