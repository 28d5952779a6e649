// fio's flow control (flow, flow_id, flow_sleep): the jobs that share a flow_id issue I/Os in
// proportion to their weights. A Flow holds one flow_id's counters, shared by its workers: the
// I/Os issued by all of them (from 1, as fio's) and the sum of their weights. Before each new I/O a
// worker compares its own share of the issued I/Os with its share of the weights; while its share
// is ahead it issues nothing (fio's flow_threshold_exceeded), else it counts the I/O in both. A
// worker that ends leaves the flow, taking its I/Os and weight out (fio's flow_put), so that the
// others do not wait for it. The shares are a clone's, as fio's (numjobs=N: N workers of that
// weight). Lock-free: relaxed atomics, one read-modify-write per I/O; the hot path never blocks.
#pragma once

#include <atomic>
#include <cstdint>

namespace iotail::engine {

// A job's flow options (JobSpec::flow): each clone's weight among the jobs of its flow id (0:
// none), and how long a held-back clone sleeps once its I/Os have completed (0: it yields).
struct FlowOptions {
  uint32_t weight = 0;    // --flow
  uint32_t id = 0;        // --flow_id
  uint64_t sleep_ns = 0;  // --flow_sleep
};

class Flow {
 public:
  std::atomic<uint64_t> issued{1};
  std::atomic<uint64_t> total_weight{0};
};

// One worker's part of a flow; a default FlowShare (no flow) always may issue.
class FlowShare {
 public:
  FlowShare() = default;
  // Joins `flow` with `weight` (1..1000); call for every worker before any of them runs.
  FlowShare(Flow* flow, uint32_t weight) : flow_(flow), weight_(weight) {
    flow_->total_weight.fetch_add(weight, std::memory_order_relaxed);
  }

  // Whether the worker belongs to a flow (JoinFlow was called with one).
  bool Joined() const { return flow_ != nullptr; }
  // Whether the worker may issue one more I/O now; when it may, the I/O is counted.
  bool MayIssue() {
    if (flow_ == nullptr) return true;
    const double mine = static_cast<double>(issued_) /
                        static_cast<double>(flow_->issued.load(std::memory_order_relaxed));
    const double allowed = static_cast<double>(weight_) /
                           static_cast<double>(flow_->total_weight.load(std::memory_order_relaxed));
    if (mine > allowed) return false;
    flow_->issued.fetch_add(1, std::memory_order_relaxed);
    ++issued_;
    return true;
  }
  bool active() const { return flow_ != nullptr; }
  // The worker has ended: its I/Os and weight leave the flow (once).
  void Leave() {
    if (flow_ == nullptr) return;
    flow_->issued.fetch_sub(issued_, std::memory_order_relaxed);
    flow_->total_weight.fetch_sub(weight_, std::memory_order_relaxed);
    flow_ = nullptr;
  }

 private:
  Flow* flow_ = nullptr;
  uint32_t weight_ = 0;
  uint64_t issued_ = 0;
};

}  // namespace iotail::engine
