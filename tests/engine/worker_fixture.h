// WorkerTest: runs one Worker (engine/worker.h) through a FakeEngine (fake_engine.h) over one
// in-memory file (a memfd of the job's size), or none (diskless, as the null engine's), and keeps
// what it recorded: the worker as JobRunner builds it for a job of one clone, one file, without
// the CLI, the targets or the threads.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "engine/clock.h"
#include "engine/job_spec.h"
#include "engine/worker.h"
#include "stats/record/recorder.h"
#include "tests/engine/fake_engine.h"

namespace iotail::engine::testing {

class WorkerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    worker_.reset();
    engine_ = nullptr;
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    snap_ = stats::RecorderSnapshot{};
  }

  // Runs spec_ (its size: the file's) through a FakeEngine that `setup` scripts; with a file
  // unless `diskless`. times: from now, recording from `ramp_ns` on, stopping `runtime_ns` after
  // that (0: none).
  void Run(const std::function<void(FakeEngine&)>& setup = {}, bool diskless = false,
           uint64_t ramp_ns = 0, uint64_t runtime_ns = 0) {
    WorkerPlan plan;
    if (!diskless) {
      fd_ = memfd_create("iotail_worker_test", MFD_CLOEXEC);
      ASSERT_GE(fd_, 0);
      ASSERT_EQ(ftruncate(fd_, static_cast<off_t>(spec_.region.size)), 0);
    }
    plan.fds = {diskless ? -1 : fd_};
    plan.paths = {diskless ? "" : "memfd"};
    plan.region_size = spec_.region.size;
    plan.loop_bytes = spec_.region.size;
    if (!spec_.time_based) {
      plan.bytes_limit =
          (spec_.region.io_size != 0 ? spec_.region.io_size : plan.loop_bytes) * spec_.loops;
    }
    auto engine = std::make_unique<FakeEngine>();
    engine_ = engine.get();
    if (setup) setup(*engine_);
    worker_ = std::make_unique<Worker>(spec_, std::move(plan), std::move(engine));
    worker_->Prepare();
    WorkerTimes times;
    times.start_ns = Clock::NowNs();
    times.record_from_ns = times.start_ns + ramp_ns;
    times.stop_at_ns = runtime_ns != 0 ? times.record_from_ns + runtime_ns : 0;
    start_ns_ = times.start_ns;
    const std::atomic<bool> stop{false};
    worker_->Run(times, stop);
    worker_->recorder().Snapshot(snap_);
  }

  uint64_t Ios(stats::Direction d) const {
    return snap_.dirs[static_cast<size_t>(stats::DirectionIndex(d))].ios;
  }
  uint64_t Bytes(stats::Direction d) const {
    return snap_.dirs[static_cast<size_t>(stats::DirectionIndex(d))].bytes;
  }
  uint64_t Errors(int err) const { return snap_.errors[static_cast<size_t>(err)]; }

  JobSpec spec_;
  int fd_ = -1;
  std::unique_ptr<Worker> worker_;
  FakeEngine* engine_ = nullptr;  // owned by worker_
  stats::RecorderSnapshot snap_;
  uint64_t start_ns_ = 0;
};

}  // namespace iotail::engine::testing
