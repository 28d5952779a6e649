// SyncEngineBase: what the engines that complete each request inside Submit() share (psync, sync,
// vsync, pvsync, pvsync2, mmap, null): a fixed ring of completed requests that Reap() hands back,
// sized to the queue depth in Prepare(), so nothing allocates per I/O. One per worker thread.
#pragma once

#include <vector>

#include "engine/io/io_engine.h"

namespace iotail::engine {

class SyncEngineBase : public IoEngine {
 public:
  void Prepare(const EngineSetup& setup) override {
    fds_ = setup.fds;
    done_.assign(setup.depth, IoCompletion{});
    count_ = 0;
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

}  // namespace iotail::engine
