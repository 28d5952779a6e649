// IologWriter: write_iolog, a job's I/Os logged as fio 3.33 logs them (version 3 iolog), so that
// fio or iotail can replay the run.
//
// The file is opened for appending (fio's fopen "a"; a symlink or a non-regular file is refused,
// as every iotail output) and gets fio's lines: "fio version 3 iolog", "US FILE add" for each file
// when the writer is made, "US FILE open" for each when the worker starts (Opened), "US FILE
// read|write|trim OFFSET LENGTH" for each I/O as it is issued, "US FILE close" at the end
// (Close); US is microseconds since the writer was made (fio's utime_since_now of its iolog
// start).
//
// Off the I/O path: the worker's Log only stores a fixed-size record into a single-producer ring
// (no allocation, no lock, no system call); a thread of the writer's own formats and writes them
// every few milliseconds. When the ring is full, Log waits for room (counted in stalls()): no I/O
// is left out of the log. Log and Opened are the one worker's; Close from the thread that made it
// once the worker has stopped. Write errors surface from Close as std::system_error.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/replay/trace_event.h"

namespace iotail::engine::replay {

class IologWriter {
 public:
  // Opens `path` and writes the version and add lines for `files` (their names as given).
  IologWriter(const std::string& path, std::vector<std::string> files);
  ~IologWriter();
  IologWriter(const IologWriter&) = delete;
  IologWriter& operator=(const IologWriter&) = delete;

  static constexpr size_t kRing = 16384;

  // Worker only: an I/O issued at now_ns (Clock::NowNs()).
  void Log(uint64_t now_ns, uint32_t file, TraceOp op, uint64_t offset, uint32_t length) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) >= kRing) [[unlikely]]
      WaitForRoom(tail);
    ring_[tail % kRing] = Record{now_ns, offset, length, file, op};
    tail_.store(tail + 1, std::memory_order_release);
  }
  // Worker only: its files are open (fio's "open" lines).
  void Opened(uint64_t now_ns);
  // Writes what is left and the close lines, stops the thread and closes the file. Idempotent.
  void Close(uint64_t now_ns);
  uint64_t stalls() const { return stalls_; }
  uint64_t logged() const { return tail_.load(std::memory_order_relaxed); }

 private:
  struct Record {
    uint64_t ns;
    uint64_t offset;
    uint32_t length;
    uint32_t file;
    TraceOp op;
  };
  void WaitForRoom(uint64_t tail);
  void Drain();  // the writer thread's: formats and writes what the ring holds
  void Loop();
  uint64_t Micros(uint64_t ns) const { return ns > start_ns_ ? (ns - start_ns_) / 1000 : 0; }

  std::string path_;
  std::vector<std::string> files_;
  std::FILE* out_ = nullptr;
  uint64_t start_ns_ = 0;
  std::unique_ptr<Record[]> ring_;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t stalls_ = 0;
  std::string line_;  // the writer thread's formatting buffer
  int error_ = 0;     // the first write error (errno)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace iotail::engine::replay
