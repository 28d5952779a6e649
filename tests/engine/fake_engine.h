// FakeEngine: an IoEngine for the worker's tests whose completions are scripted, so that the
// worker's rules for what an engine returns (io_engine.h: bytes or -errno per completion) are
// tested in microseconds without a device: short transfers, -EAGAIN, -EIO and other errnos, end of
// file (0 bytes), completions that arrive after later ones (late), and reaps that take fewer
// completions than are ready (partial batches).
//
// Every request handed to Submit (a new I/O or a worker's resubmission of a remainder) is one
// submission, numbered from 0 in order and logged (submissions()). The script (set_script) gives
// each its Outcome: the result (the whole request by default), how many more Reap calls it waits
// before it may be reaped (delay_reaps; the contract's min_complete still holds: a Reap that would
// return fewer releases the waiting ones earliest first), and its latency on the engine's own
// clock. That clock never runs behind Clock::NowNs() but jumps ahead by each I/O's latency (the
// stamps and done_ns come from it), so a test of time (the rate floor's 2 s settle, ratecycle)
// runs in milliseconds. The data of the bytes transferred moves to and from the file at
// EngineSetup::fds[file] when there is one (a memfd in the tests), so that verify works.
// Single-threaded, as an engine is; not for production (it allocates on the hot path).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/clock.h"
#include "engine/io/io_engine.h"

namespace iotail::engine::testing {

class FakeEngine : public IoEngine {
 public:
  static constexpr int64_t kWhole = INT64_MIN;  // Outcome::result: the whole request
  struct Outcome {
    int64_t result = kWhole;     // bytes transferred, -errno, or kWhole
    uint32_t delay_reaps = 0;    // late: reapable only after this many more Reap calls
    uint64_t latency_ns = 1000;  // on the engine's clock
    bool corrupt = false;        // a write's data lands with its first byte flipped
  };
  struct Submission {
    uint64_t index;  // 0-based, in submission order
    uint32_t slot;
    stats::Direction dir;
    uint32_t file;
    uint64_t offset;
    uint32_t len;
  };
  using Script = std::function<Outcome(const Submission&)>;

  void set_script(Script script) { script_ = std::move(script); }
  // Reaps take at most this many completions (0: as many as out.size() holds), but never fewer
  // than min_complete.
  void set_max_per_reap(uint32_t n) { max_per_reap_ = n; }
  void set_asynchronous(bool a) { asynchronous_ = a; }
  void set_retries_eagain(bool r) { retries_eagain_ = r; }
  // The Reap call (0-based) that fails as an engine would (-errno); -1: none.
  void fail_reap(int64_t call, int err) {
    fail_reap_call_ = call;
    fail_reap_err_ = err;
  }

  const std::vector<Submission>& submissions() const { return submissions_; }
  uint64_t reap_calls() const { return reap_calls_; }
  uint32_t depth() const { return setup_.depth; }
  uint64_t now_ns() const { return now_; }  // the engine's clock: its last completion's time

  void Prepare(const EngineSetup& setup) override {
    setup_ = setup;
    now_ = Clock::NowNs();
  }

  int Submit(std::span<const IoRequest> requests) override {
    now_ = std::max(now_, Clock::NowNs());
    for (const IoRequest& r : requests) {
      const Submission s{submissions_.size(), r.slot, r.dir, r.file, r.offset, r.len};
      submissions_.push_back(s);
      const Outcome o = script_ ? script_(s) : Outcome{};
      const int64_t result = o.result == kWhole ? r.len : o.result;
      if (result > 0) {
        Transfer(r, static_cast<uint32_t>(std::min<int64_t>(result, r.len)), o.corrupt);
      }
      r.stamps->start_ns = r.stamps->issued_ns = now_;
      pending_.push_back(Pending{r.slot, result, o.delay_reaps, now_ + o.latency_ns});
    }
    return static_cast<int>(requests.size());
  }

  int Reap(std::span<IoCompletion> out, uint32_t min_complete) override {
    const uint64_t call = reap_calls_++;
    if (static_cast<int64_t>(call) == fail_reap_call_) return -fail_reap_err_;
    size_t max = out.size();
    if (max_per_reap_ != 0) max = std::min<size_t>(max, std::max(max_per_reap_, min_complete));
    // Waiting ones released, earliest first, so that min_complete are ready.
    size_t ready = 0;
    for (const Pending& p : pending_) ready += p.delay == 0;
    for (Pending& p : pending_) {
      if (ready >= min_complete) break;
      if (p.delay != 0) {
        p.delay = 0;
        ++ready;
      }
    }
    size_t n = 0;
    for (auto it = pending_.begin(); it != pending_.end() && n < max;) {
      if (it->delay != 0) {
        ++it;
        continue;
      }
      now_ = std::max(now_, it->done_ns);
      out[n++] = IoCompletion{it->slot, it->result, now_};
      it = pending_.erase(it);
    }
    for (Pending& p : pending_) p.delay -= p.delay != 0;
    return static_cast<int>(n);
  }

  std::string Describe() const override { return "fake"; }
  bool Asynchronous() const override { return asynchronous_; }
  bool RetriesEagain() const override { return retries_eagain_; }

 private:
  struct Pending {
    uint32_t slot;
    int64_t result;
    uint32_t delay;
    uint64_t done_ns;
  };
  void Transfer(const IoRequest& r, uint32_t bytes, bool corrupt) {
    const int fd = r.file < setup_.fds.size() ? setup_.fds[r.file] : -1;
    if (fd < 0) return;
    const auto at = static_cast<off_t>(r.offset);
    if (r.dir != stats::Direction::kWrite) {
      (void)pread(fd, r.buf, bytes, at);  // a memfd the test sized: the whole range
      return;
    }
    (void)pwrite(fd, r.buf, bytes, at);
    if (corrupt) {
      const char flipped = static_cast<char>(~r.buf[0]);
      (void)pwrite(fd, &flipped, 1, at);
    }
  }

  EngineSetup setup_;
  Script script_;
  uint32_t max_per_reap_ = 0;
  bool asynchronous_ = true;
  bool retries_eagain_ = true;
  int64_t fail_reap_call_ = -1;
  int fail_reap_err_ = 0;
  uint64_t now_ = 0;
  uint64_t reap_calls_ = 0;
  std::vector<Submission> submissions_;
  std::vector<Pending> pending_;
};

}  // namespace iotail::engine::testing
