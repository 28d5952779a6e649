// SlowIoLog: the SlowIoSink of --explain_slowest with --write_hist_log=PREFIX: one CSV file per
// worker, PREFIX_slowest.N.log (N as the histogram logs'), whose first line is the header
//   time_ms,direction,file,offset,length,depth,cpu,latency_ns,joined,schedule_ns,submit_ns,
//   queue_ns,device_ns,delivery_ns
// and then, for every closed interval, the worker's slowest I/Os of that interval, slowest first:
// the interval's log time (as the histogram logs'), read/write/trim, the file's name, the offset
// and length in bytes, the I/Os in flight once it was submitted, the CPU it was reaped on, its
// latency (lat: from the intended start in the open loop) and, when its block request was joined
// (joined 1), the five stages in ns, which add up to the latency; not joined (0): the schedule
// stage only, the others empty. Files are created when built (never through a link:
// OpenRegularForWriting) and flushed every interval. std::system_error on a failed write. One
// thread at a time.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "stats/record/explain_sink.h"

namespace iotail::stats {

struct SlowIoLogOptions {
  std::string prefix;
  int first_number = 1;  // the workers N = first_number .. first_number + files.size() - 1
  // Per worker: the names of its files, by the file index of its rows.
  std::vector<std::vector<std::string>> files;
};

class SlowIoLog final : public SlowIoSink {
 public:
  explicit SlowIoLog(SlowIoLogOptions options);
  ~SlowIoLog() override;
  SlowIoLog(const SlowIoLog&) = delete;
  SlowIoLog& operator=(const SlowIoLog&) = delete;

  void OnSlowIos(const IntervalInfo& info, std::span<const SlowIo> rows) override;
  void Close() override;

  std::vector<std::string> paths() const { return paths_; }
  static std::string PathOf(const std::string& prefix, int number);

 private:
  SlowIoLogOptions options_;
  std::vector<std::string> paths_;
  std::vector<std::FILE*> files_;
};

}  // namespace iotail::stats
