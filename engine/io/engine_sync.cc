// The synchronous engines: psync (pread/pwrite, one system call per I/O, completed inside Submit)
// and null (no I/O at all: every request completes at once with its full length, for measuring
// iotail's own per-I/O cost). Both keep completed requests in a fixed ring until Reap().
//
// psync stamps each request right before its pread/pwrite and its completion right after, so an
// I/O's clat is that one system call and nothing else; issued_ns equals start_ns (there is no
// separate submission, so no slat). A worker runs synchronous engines at depth 1 (see
// JobSpec::Normalize): with a deeper batch the later requests would wait for the earlier ones.
// null stamps once per Submit() and once per Reap(), so its latencies are iotail's own overhead.
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "engine/clock.h"
#include "engine/io/io_engine.h"

namespace iotail::engine {

namespace {

class SyncEngineBase : public IoEngine {
 public:
  void Prepare(const EngineSetup& setup) override {
    fds_ = setup.fds;
    done_.assign(setup.depth, IoCompletion{});
  }
  int Reap(std::span<IoCompletion> out, uint32_t /*min_complete*/) override {
    const size_t n = count_ < out.size() ? count_ : out.size();
    for (size_t i = 0; i < n; ++i) out[i] = done_[i];
    // Keep any remainder (only when out is smaller than what is done).
    for (size_t i = n; i < count_; ++i) done_[i - n] = done_[i];
    count_ -= n;
    return static_cast<int>(n);
  }
  bool Asynchronous() const override { return false; }

 protected:
  void Complete(uint32_t slot, int64_t result, uint64_t done_ns) {
    done_[count_++] = IoCompletion{slot, result, done_ns};
  }
  std::vector<int> fds_;
  std::vector<IoCompletion> done_;
  size_t count_ = 0;
};

class PsyncEngine final : public SyncEngineBase {
 public:
  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const int fd = fds_[r.file];
      const uint64_t start = Clock::NowNs();
      const ssize_t n = r.dir == stats::Direction::kRead
                            ? pread(fd, r.buf, r.len, static_cast<off_t>(r.offset))
                            : pwrite(fd, r.buf, r.len, static_cast<off_t>(r.offset));
      const int64_t result = n >= 0 ? n : -errno;
      const uint64_t done = Clock::NowNs();
      r.stamps->start_ns = start;
      r.stamps->issued_ns = start;
      Complete(r.slot, result, done);
    }
    return static_cast<int>(requests.size());
  }
  std::string Describe() const override { return "psync"; }
};

class NullEngine final : public SyncEngineBase {
 public:
  int Submit(std::span<const IoRequest> requests) override {
    const uint64_t now = Clock::NowNs();
    for (const IoRequest& r : requests) {
      r.stamps->start_ns = now;
      r.stamps->issued_ns = now;
      Complete(r.slot, r.len, 0);
    }
    return static_cast<int>(requests.size());
  }
  int Reap(std::span<IoCompletion> out, uint32_t min_complete) override {
    const int n = SyncEngineBase::Reap(out, min_complete);
    if (n > 0) {
      const uint64_t now = Clock::NowNs();
      for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)].done_ns = now;
    }
    return n;
  }
  std::string Describe() const override { return "null"; }
};

}  // namespace

std::unique_ptr<IoEngine> MakePsyncEngine() { return std::make_unique<PsyncEngine>(); }
std::unique_ptr<IoEngine> MakeNullEngine() { return std::make_unique<NullEngine>(); }

}  // namespace iotail::engine
