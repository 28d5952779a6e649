#include "engine/replay/iolog_writer.h"

#include <fmt/format.h>
#include <sched.h>

#include <cerrno>
#include <chrono>
#include <system_error>

#include "engine/clock.h"
#include "stats/util/output_file.h"

namespace iotail::engine::replay {

namespace {

const char* ActionName(TraceOp op) {
  switch (op) {
    case TraceOp::kRead:
      return "read";
    case TraceOp::kWrite:
      return "write";
    case TraceOp::kTrim:
      return "trim";
    case TraceOp::kSync:
      return "sync";
    case TraceOp::kDatasync:
      return "datasync";
    default:
      return "read";
  }
}

}  // namespace

IologWriter::IologWriter(const std::string& path, std::vector<std::string> files)
    : path_(path), files_(std::move(files)), ring_(std::make_unique<Record[]>(kRing)) {
  out_ = stats::OpenRegularForAppending(path, "write_iolog");
  start_ns_ = Clock::NowNs();
  line_ = "fio version 3 iolog\n";
  for (const std::string& f : files_) fmt::format_to(std::back_inserter(line_), "0 {} add\n", f);
  if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size()) error_ = errno;
  line_.clear();
  thread_ = std::thread([this] { Loop(); });
}

IologWriter::~IologWriter() {
  try {
    Close(Clock::NowNs());
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor reports nothing
  }
}

void IologWriter::Opened(uint64_t now_ns) {
  // Through the ring as I/Os are, so the lines keep their order: kOpen records carry the file.
  for (uint32_t f = 0; f < files_.size(); ++f) Log(now_ns, f, TraceOp::kOpen, 0, 0);
}

void IologWriter::WaitForRoom(uint64_t tail) {
  ++stalls_;
  cv_.notify_one();
  while (tail - head_.load(std::memory_order_acquire) >= kRing) sched_yield();
}

void IologWriter::Drain() {
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  uint64_t head = head_.load(std::memory_order_relaxed);
  auto o = std::back_inserter(line_);
  while (head < tail) {
    const Record& r = ring_[head % kRing];
    const std::string& name = files_[r.file];
    if (r.op == TraceOp::kOpen) {
      fmt::format_to(o, "{} {} open\n", Micros(r.ns), name);
    } else {
      fmt::format_to(o, "{} {} {} {} {}\n", Micros(r.ns), name, ActionName(r.op), r.offset,
                     r.length);
    }
    ++head;
    if (line_.size() >= 60'000) {
      head_.store(head, std::memory_order_release);
      if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size() && error_ == 0)
        error_ = errno;
      line_.clear();
    }
  }
  head_.store(head, std::memory_order_release);
  if (!line_.empty()) {
    if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size() && error_ == 0)
      error_ = errno;
    line_.clear();
  }
}

void IologWriter::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(5));
    lock.unlock();
    Drain();
    lock.lock();
  }
}

void IologWriter::Close(uint64_t now_ns) {
  if (out_ == nullptr) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  Drain();
  auto o = std::back_inserter(line_);
  for (const std::string& f : files_) fmt::format_to(o, "{} {} close\n", Micros(now_ns), f);
  if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size() && error_ == 0)
    error_ = errno;
  line_.clear();
  if (std::fclose(out_) != 0 && error_ == 0) error_ = errno;
  out_ = nullptr;
  if (error_ != 0) {
    throw std::system_error(error_, std::generic_category(),
                            fmt::format("--write_iolog: write '{}'", path_));
  }
}

}  // namespace iotail::engine::replay
