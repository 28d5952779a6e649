// IoTrail: a worker's completed I/Os, one record each, handed to the explain session
// (engine/explain/explain_session.h) for --explain and --explain_slowest: iotail's own stamps of
// the I/O (intended start, submit, done), where it went (file, offset, length, direction), the
// depth it was submitted at, the CPU it was reaped on and, with --explain on a traced disk, its
// request's kernel times, which the worker looked up as it reaped it (engine/explain/
// request_join.h).
//
// A single-producer single-consumer ring of fixed capacity (a power of two), allocated when built:
// the worker (the one producer) pushes with a few stores and one release store, never allocating,
// locking or calling the kernel; the session's thread (the one consumer) takes what was pushed.
// When the ring is full the record is counted (dropped()) and not written: the worker never waits
// for the consumer. Only a worker of a job with --explain or --explain_slowest has one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "stats/core/direction.h"

namespace iotail::engine {

// Whether an I/O was joined to its block request: the only request at its place, in its
// direction, inside its stamps (kJoined); one of another length there (kSplit: split or merged by
// the block layer); none, or more than one (kNotJoined).
enum class JoinOutcome : uint8_t { kNotJoined, kJoined, kSplit };

struct IoTrailRecord {
  uint64_t intended_ns = 0;  // open loop: the intended start; 0 in the closed loop
  uint64_t start_ns = 0;     // the engine's stamp before the submitting call (Clock::NowNs)
  uint64_t issued_ns = 0;    // after it
  uint64_t done_ns = 0;      // when the completion was seen
  uint64_t offset = 0;       // in the worker's file
  // Its request's, when joined (CLOCK_MONOTONIC): into the block layer, issued to the driver (0:
  // unseen), completed by it.
  uint64_t entered_ns = 0;
  uint64_t request_issue_ns = 0;
  uint64_t complete_ns = 0;
  uint32_t length = 0;
  uint32_t file = 0;   // the worker's file index
  uint16_t depth = 0;  // in flight once submitted, itself included
  int16_t cpu = -1;    // the CPU it was reaped on
  stats::Direction dir = stats::Direction::kRead;
  JoinOutcome join = JoinOutcome::kNotJoined;
};

class IoTrail {
 public:
  // capacity: rounded up to a power of two, at least 64.
  explicit IoTrail(size_t capacity);

  // Producer only. False (and counted) when the ring is full.
  bool Push(const IoTrailRecord& record) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_cache_ > mask_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (head - tail_cache_ > mask_) {
        dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return false;
      }
    }
    records_[head & mask_] = record;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer only: how many records are there to take now (a mark for Consume).
  uint64_t Mark() const { return head_.load(std::memory_order_acquire); }
  // Consumer only: calls f(record) on each record pushed before `mark` (from Mark()) and not yet
  // taken, oldest first, in place; then frees their room. Returns how many.
  template <typename F>
  size_t Consume(uint64_t mark, F&& f) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    for (uint64_t i = tail; i < mark; ++i) f(records_[i & mask_]);
    if (mark > tail) tail_.store(mark, std::memory_order_release);
    return mark > tail ? static_cast<size_t>(mark - tail) : 0;
  }

  // Any thread: records the producer could not push.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  uint64_t mask_;
  std::unique_ptr<IoTrailRecord[]> records_;
  alignas(64) std::atomic<uint64_t> head_{0};  // written by the producer
  uint64_t tail_cache_ = 0;                    // the producer's last view of tail_
  std::atomic<uint64_t> dropped_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};  // written by the consumer
};

inline IoTrail::IoTrail(size_t capacity) {
  size_t c = 64;
  while (c < capacity) c <<= 1;
  mask_ = c - 1;
  records_ = std::make_unique<IoTrailRecord[]>(c);
}

}  // namespace iotail::engine
