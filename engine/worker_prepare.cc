// Worker (engine/worker.h): Prepare, what a worker sets up before its run (its thread's NUMA
// policy and I/O priority, buffers, the verify list, slots and the engine).
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "engine/numa.h"
#include "engine/worker.h"
#include "stats/core/errors.h"

namespace iotail::engine {

void Worker::Prepare(const std::atomic<bool>* stop) {
  ApplyNumaMemPolicy(spec_.placement.numa_mem_policy);
  if (spec_.placement.numa_cpu_nodes.Given()) {
    numa_cpus_ = NumaCpus(spec_.placement.numa_cpu_nodes);
    const auto& allowed = spec_.placement.cpus_allowed;
    if (!allowed.empty() && std::none_of(numa_cpus_.begin(), numa_cpus_.end(), [&](int c) {
          return std::find(allowed.begin(), allowed.end(), c) != allowed.end();
        })) {
      throw stats::UsageError("--numa_cpu_nodes: none of its CPUs is in --cpus_allowed");
    }
  }
  if (spec_.prio.ioprio >= 0 || spec_.prio.ioprio_class >= 0) {
    // On the worker's own thread (who 0 with IOPRIO_WHO_PROCESS is the calling thread), as fio.
    constexpr int kWhoProcess = 1, kClassShift = 13, kClassBestEffort = 2;
    const int cls = spec_.prio.ioprio_class > 0 ? spec_.prio.ioprio_class : kClassBestEffort;
    const int value = (cls << kClassShift) | std::max(spec_.prio.ioprio, 0);
    if (syscall(SYS_ioprio_set, kWhoProcess, 0, value) != 0) {
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("ioprio_set (--prioclass={} --prio={})", cls,
                                          std::max(spec_.prio.ioprio, 0)));
    }
  }
  const uint32_t depth = spec_.queue.iodepth;
  sync_.writes_since.assign(plan_.fds.size(), 0);
  sync_.due.assign(plan_.fds.size(), 0);
  is_block_.assign(plan_.fds.size(), false);
  for (size_t f = 0; f < plan_.fds.size(); ++f) {
    struct stat st {};
    is_block_[f] = plan_.fds[f] >= 0 && fstat(plan_.fds[f], &st) == 0 && S_ISBLK(st.st_mode);
  }
  // Trims carry no data: one page per slot will do.
  data_.size = spec_.HasTrims() ? 4096 : (spec_.MaxBlockSize() + 4095) / 4096 * 4096;
  const size_t total = static_cast<size_t>(data_.size) * depth;
  data_.buffers = static_cast<char*>(std::aligned_alloc(4096, total));
  if (data_.buffers == nullptr)
    throw std::system_error(ENOMEM, std::generic_category(), "I/O buffers");
  data_.content = spec_.buffers.Content();
  FastRandom rng(spec_.randseed ^ static_cast<uint64_t>(plan_.index));
  for (uint32_t s = 0; s < depth; ++s) {
    data_.content.Fill(data_.buffers + static_cast<size_t>(s) * data_.size, data_.size, rng);
  }
  data_.refill = FastRandom(spec_.randseed ^ ~static_cast<uint64_t>(plan_.index));
  if (spec_.buffers.dedupe.percentage != 0) {
    // The working set: a share of the job's size in pages of the smallest write, as fio's.
    const uint64_t pages = plan_.region_size * spec_.buffers.dedupe.working_set_percentage / 100 /
                           std::max<uint32_t>(spec_.MinBlockSize(), 1);
    const uint64_t ws_seed = spec_.buffers.dedupe.global ? 0x5eedded0ull
                                                         : spec_.randseed ^ 0xded0ull ^
                                                               std::hash<std::string>{}(spec_.name);
    data_.dedupe.emplace(spec_.buffers.dedupe, pages,
                         spec_.randseed ^ 0xd0d0ull * (plan_.index + 1), ws_seed);
  }
  const uint32_t clone = spec_.numjobs > 1 ? static_cast<uint32_t>(plan_.index) % spec_.numjobs : 0;
  verify_.write_seed = spec_.files_per_clone || clone == 0
                           ? spec_.randseed
                           : spec_.randseed ^ (0x9e3779b97f4a7c15ull * clone);
  if (spec_.VerifiesWrittenEachLoop()) {
    // A loop writes each block at most once (JobSpec::ValidateVerify): its list never grows past
    // the blocks of a pass, so the hot path never allocates.
    verify_.each_loop = true;
    const uint64_t per_file = plan_.region_size / std::max<uint32_t>(spec_.MinBlockSize(), 1) + 1;
    verify_.backlog.reserve(per_file * plan_.fds.size());
  }
  if (spec_.verify.backlog != 0) {
    verify_.backlog.reserve(spec_.verify.backlog);
    verify_.backlog_buffer = static_cast<char*>(std::aligned_alloc(4096, data_.size));
    if (verify_.backlog_buffer == nullptr) {
      throw std::system_error(ENOMEM, std::generic_category(), "verify_backlog buffer");
    }
  }
  queue_.slots.assign(depth, Slot{});
  queue_.free.resize(depth);
  for (uint32_t i = 0; i < depth; ++i) queue_.free[i] = depth - 1 - i;
  queue_.free_count = depth;
  queue_.redo.resize(depth);
  queue_.batch.resize(depth);
  queue_.completions.resize(depth);
  EngineSetup setup;
  setup.fds = plan_.fds;
  setup.depth = depth;
  setup.buffers = data_.buffers;
  setup.buffer_size = data_.size;
  setup.sqthread_poll = spec_.engine_options.sqthread_poll;
  setup.hipri = spec_.engine_options.hipri;
  setup.nowait = spec_.engine_options.nowait;
  setup.random_access = spec_.IsRandom();
  setup.fadvise = spec_.FadviseAdvice();
  setup.uri = spec_.uri;
  setup.nbd_timeout_ns = spec_.nbd.timeout_ns;
  setup.nbd_path = spec_.nbd.path;
  setup.nbd_conns = spec_.nbd.conns;
  setup.donor_path = spec_.engine_options.e4defrag_donor;
  setup.donor_inplace = spec_.engine_options.e4defrag_inplace;
  setup.donor_offset = spec_.region.offset;
  const uint64_t file_end =
      spec_.region.file_size != 0 ? spec_.region.file_size : spec_.region.size;
  setup.donor_len = file_end > spec_.region.offset ? file_end - spec_.region.offset : 0;
  setup.stop = stop;
  setup.paths = plan_.paths;
  setup.stat_type = spec_.engine_options.stat_type;
  engine_->Prepare(setup);
  fileops_.on = engine_->OperatesOnFiles();
  fileops_.operated.assign(plan_.fds.size(), 0);
  fileops_.dir =
      spec_.HasReads() || !spec_.HasWrites() ? stats::Direction::kRead : stats::Direction::kWrite;
  traits_.asynchronous = engine_->Asynchronous();
  traits_.retries_eagain = engine_->RetriesEagain();
  traits_.can_abandon = engine_->CanAbandon();
  if (lat_.enabled() && !spec_.latency_target.run) {
    recorder_->Snapshot(lt_.baseline);  // sized now: the reset's snapshot allocates nothing
    lt_.baseline.ReserveBuckets();
  }
}

}  // namespace iotail::engine
