// The synchronous engines: psync (pread/pwrite, one system call per I/O, completed inside Submit)
// and null (no I/O at all: every request completes at once with its full length, for measuring
// iotail's own per-I/O cost). Both keep completed requests in a fixed ring until Reap().
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "engine/io_engine.h"

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

 protected:
  void Complete(uint32_t slot, int64_t result) { done_[count_++] = IoCompletion{slot, result}; }
  std::vector<int> fds_;
  std::vector<IoCompletion> done_;
  size_t count_ = 0;
};

class PsyncEngine final : public SyncEngineBase {
 public:
  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const int fd = fds_[r.file];
      const ssize_t n = r.dir == stats::Direction::kRead
                            ? pread(fd, r.buf, r.len, static_cast<off_t>(r.offset))
                            : pwrite(fd, r.buf, r.len, static_cast<off_t>(r.offset));
      Complete(r.slot, n >= 0 ? n : -errno);
    }
    return static_cast<int>(requests.size());
  }
  std::string Describe() const override { return "psync"; }
};

class NullEngine final : public SyncEngineBase {
 public:
  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) Complete(r.slot, r.len);
    return static_cast<int>(requests.size());
  }
  std::string Describe() const override { return "null"; }
};

}  // namespace

std::unique_ptr<IoEngine> MakePsyncEngine() { return std::make_unique<PsyncEngine>(); }
std::unique_ptr<IoEngine> MakeNullEngine() { return std::make_unique<NullEngine>(); }

}  // namespace iotail::engine
