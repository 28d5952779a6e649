// What the tests of engine/explain/ share: a loop device over a temporary file (created with
// `losetup --find --show --direct-io=on`, detached and the file removed by the destructor), an
// io_uring event collector, direct 4 KiB reads stamped with CLOCK_MONOTONIC (and the requests the
// tracer's table held for them), and the tracer opened or the
// test skipped with the tracer's own reason (never passed without running). One owner each.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/explain/block_tracer.h"
#include "tests/cli/cli_test_util.h"

namespace iotail::testing {

inline uint64_t MonotonicNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A shell command's exit status and its output (standard error included), without the last
// newline.
inline std::pair<int, std::string> RunShell(const std::string& command) {
  CommandResult r = Capture("{ " + command + "; } 2>&1");
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return {r.status, r.out};
}

// A loop device (direct I/O) over `backing`, or over a new file of `bytes` in /dev/shm.
class LoopDevice {
 public:
  LoopDevice() = default;
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  ~LoopDevice() {
    // Partitions added with partx outlive the loop device unless removed first.
    if (!path_.empty()) RunShell("partx -d " + path_ + "; losetup -d " + path_);
    if (!owned_file_.empty()) std::filesystem::remove(owned_file_);
  }

  // Empty, or why not (a reason to skip).
  std::string AttachNewFile(uint64_t bytes) {
    if (::geteuid() != 0) return "needs root for losetup";
    owned_file_ = "/dev/shm/iotail_explain_" + std::to_string(::getpid()) + "_" +
                  std::to_string(counter_++) + ".img";
    const auto [status, out] = RunShell("truncate -s " + std::to_string(bytes) + " " + owned_file_);
    if (status != 0) return "truncate: " + out;
    return Attach(owned_file_);
  }

  std::string Attach(const std::string& backing) {
    if (::geteuid() != 0) return "needs root for losetup";
    const auto [status, out] = RunShell("losetup --find --show --direct-io=on " + backing);
    if (status != 0 || out.rfind("/dev/loop", 0) != 0) return "losetup not permitted: " + out;
    path_ = out;
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) return "cannot stat " + path_;
    rdev_ = st.st_rdev;
    return {};
  }

  const std::string& path() const { return path_; }
  dev_t rdev() const { return rdev_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
  std::string owned_file_;
  dev_t rdev_ = 0;
};

class Collector : public engine::TraceConsumer {
 public:
  void OnIoUring(const engine::IoUringEvent& event) override { uring.push_back(event); }
  std::vector<engine::IoUringEvent> uring;
};

// Polls until `done()` or `timeout`, then once more without waiting.
template <typename Done>
void PollUntil(engine::BlockTracer& tracer, Collector& collector, Done done,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    tracer.Poll(collector, std::chrono::milliseconds(20));
  }
  tracer.Drain(collector);
}

// A direct 4 KiB read of `path` at `offset`; the monotonic instants before and after it.
struct StampedRead {
  uint64_t offset = 0;
  uint64_t before_ns = 0;
  uint64_t after_ns = 0;
};

inline std::vector<StampedRead> DirectReads(const std::string& path,
                                            const std::vector<uint64_t>& offsets) {
  std::vector<StampedRead> reads;
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  EXPECT_GE(fd, 0) << path;
  if (fd < 0) return reads;
  void* buffer = nullptr;
  EXPECT_EQ(::posix_memalign(&buffer, 4096, 4096), 0);
  for (const uint64_t offset : offsets) {
    StampedRead read{offset, MonotonicNs(), 0};
    EXPECT_EQ(::pread(fd, buffer, 4096, static_cast<off_t>(offset)), 4096) << offset;
    read.after_ns = MonotonicNs();
    reads.push_back(read);
  }
  std::free(buffer);
  ::close(fd);
  return reads;
}

// A direct read and the request the tracer's table held at its place right after it (none: not
// found).
struct TracedRead {
  StampedRead read;
  std::optional<engine::BlockRequestEvent> request;
};

// Direct 4 KiB reads of `path` at `offsets`, each followed by a lookup (Take) of the request at its
// place on `disk`: `sector_of(offset)` (by default offset / 512, a whole disk's own offsets).
template <typename SectorOf>
std::vector<TracedRead> TracedReads(const engine::BlockTracer& tracer, const std::string& path,
                                    dev_t disk, const std::vector<uint64_t>& offsets,
                                    SectorOf sector_of) {
  std::vector<TracedRead> traced;
  const engine::RequestTable table = tracer.Requests();
  for (const uint64_t offset : offsets) {
    const std::vector<StampedRead> read = DirectReads(path, {offset});
    if (read.empty()) break;
    traced.push_back({read.front(), table.Take(disk, sector_of(offset))});
  }
  return traced;
}

inline std::vector<TracedRead> TracedReads(const engine::BlockTracer& tracer,
                                           const std::string& path, dev_t disk,
                                           const std::vector<uint64_t>& offsets) {
  return TracedReads(tracer, path, disk, offsets, [](uint64_t offset) { return offset / 512; });
}

// The median of `values` (sorted copy).
inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

}  // namespace iotail::testing

// Opens a tracer into `tracer` (a std::unique_ptr<engine::BlockTracer>) or skips the test with
// the tracer's reason.
#define IOTAIL_OPEN_TRACER_OR_SKIP(tracer, ...)                                            \
  do {                                                                                     \
    auto opened_ = ::iotail::engine::BlockTracer::Open(__VA_ARGS__);                       \
    if (auto* why_ = std::get_if<::iotail::engine::TracerUnavailable>(&opened_)) {         \
      GTEST_SKIP() << "no BPF tracer here: " << why_->reason;                              \
    }                                                                                      \
    tracer = std::move(std::get<std::unique_ptr<::iotail::engine::BlockTracer>>(opened_)); \
  } while (0)
