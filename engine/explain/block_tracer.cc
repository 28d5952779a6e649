#include "engine/explain/block_tracer.h"

#include <sys/sysmacros.h>

#include <atomic>
#include <bit>
#include <cstring>

#if IOTAIL_HAVE_EXPLAIN
#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "engine/explain/libbpf_loader.h"
#include "engine/explain/record_ring.h"
#include "engine/explain/trace_device.h"
#include "engine/explain/trace_programs.h"
#endif

namespace iotail::engine {

#if IOTAIL_HAVE_EXPLAIN
namespace {

using Cause = TracerUnavailable::Cause;

// CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON (5.8+), in the effective set.
bool MayTrace() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return ::geteuid() == 0;
  auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1; };
  constexpr int kPerfmon = 38, kBpf = 39;  // absent from older headers
  return has(CAP_SYS_ADMIN) || (has(kBpf) && has(kPerfmon));
}

// blk_status_t (include/linux/blk_types.h) -> -errno as blk_status_to_errno gives it.
int32_t ErrnoOfStatus(int32_t status) {
  switch (status) {
    case 0:
      return 0;
    case 1:
      return -EOPNOTSUPP;
    case 2:
      return -ETIMEDOUT;
    case 3:
      return -ENOSPC;
    case 4:
      return -ENOLINK;
    case 5:
      return -EREMOTEIO;
    case 6:
      return -EBADE;
    case 7:
      return -ENODATA;
    case 8:
      return -EILSEQ;
    case 9:
      return -ENOMEM;
    case 11:
      return -EREMCHG;
    case 12:
      return -EAGAIN;
    case 13:
      return -EBUSY;
    case 14:
      return -ETOOMANYREFS;
    case 15:
      return -EOVERFLOW;
    case 16:
      return -ENODEV;
    case 17:
      return -ETIME;
    case 19:
      return -EINVAL;
    default:
      return -EIO;  // 10 (BLK_STS_IOERR) and any the kernel adds
  }
}

BlockRequestEvent Decode(const iotail_block_record& r) {
  BlockRequestEvent e;
  e.dev = makedev(r.dev >> 20, r.dev & ((1U << 20) - 1));
  e.sector = r.sector;
  e.nr_sector = r.nr_sector;
  e.op = r.op <= IOTAIL_OP_OTHER ? static_cast<BlockOp>(r.op) : BlockOp::kOther;
  e.error = (r.flags & IOTAIL_BLOCK_STATUS) ? ErrnoOfStatus(r.error) : r.error;
  e.cpu = r.cpu;
  e.insert_ns = r.insert_ns;
  e.issue_ns = r.issue_ns;
  e.complete_ns = r.complete_ns;
  e.alloc_ns = r.alloc_ns;
  e.kernel_issue_ns = r.kernel_issue_ns;
  e.partial = (r.flags & IOTAIL_BLOCK_PARTIAL) != 0;
  e.requeued = (r.flags & IOTAIL_BLOCK_REQUEUED) != 0;
  return e;
}

IoUringEvent Decode(const iotail_uring_record& r) {
  IoUringEvent e;
  e.kind = r.kind == IOTAIL_TRACE_URING_SUBMIT ? IoUringEvent::Kind::kSubmit
                                               : IoUringEvent::Kind::kComplete;
  e.time_ns = r.time_ns;
  e.ring = r.ring;
  e.user_data = r.user_data;
  e.res = r.res;
  e.opcode = r.opcode;
  e.tid = static_cast<pid_t>(r.tid);
  return e;
}

uint64_t LoadCounter(const uint64_t& counter) {
  return __atomic_load_n(&counter, __ATOMIC_RELAXED);
}

}  // namespace

struct BlockTracer::Impl {
  std::unique_ptr<TracePrograms> programs;
  std::optional<RecordRing> ring;
  const char* attachment = "";
  TraceConsumer* consumer = nullptr;  // during Poll and Drain
  std::atomic<uint64_t> delivered{0};
  TraceCounters closed;  // the counters when Close() freed the programs

  ~Impl() { Free(); }
  void Free() {
    ring.reset();
    programs.reset();
  }

  // Hands one record to the consumer.
  void OnRecord(const void* data, size_t size) {
    uint32_t kind = 0;
    if (size < sizeof(kind)) return;
    std::memcpy(&kind, data, sizeof(kind));
    if (kind == IOTAIL_TRACE_BLOCK && size >= sizeof(iotail_block_record)) {
      iotail_block_record record;
      std::memcpy(&record, data, sizeof(record));
      consumer->OnBlockRequest(Decode(record));
    } else if ((kind == IOTAIL_TRACE_URING_SUBMIT || kind == IOTAIL_TRACE_URING_COMPLETE) &&
               size >= sizeof(iotail_uring_record)) {
      iotail_uring_record record;
      std::memcpy(&record, data, sizeof(record));
      consumer->OnIoUring(Decode(record));
    } else {
      return;
    }
    delivered.fetch_add(1, std::memory_order_relaxed);
  }

  size_t Consume() {
    return ring->Consume([this](const void* data, size_t size) { OnRecord(data, size); });
  }
};

std::variant<std::unique_ptr<BlockTracer>, TracerUnavailable> BlockTracer::Open(
    std::span<const dev_t> devices, pid_t tgid, const BlockTracerOptions& options) {
  if (devices.size() > 4096 || (devices.empty() && tgid <= 0) || tgid < 0 ||
      options.ring_bytes > (size_t{1} << 30)) {
    return TracerUnavailable{Cause::kBadInput,
                             fmt::format("nothing to trace, or too much ({} devices, process {}, a "
                                         "ring buffer of {} bytes)",
                                         devices.size(), tgid, options.ring_bytes)};
  }
  // The tracepoints name whole disks: a partition (or what is no block device) would match
  // nothing, silently.
  for (const dev_t dev : devices) {
    const auto device = TraceDeviceOf(dev);
    if (const auto* why = std::get_if<std::string>(&device)) {
      return TracerUnavailable{Cause::kBadInput, *why};
    }
    if (const dev_t disk = std::get<TraceDevice>(device).disk; disk != dev) {
      return TracerUnavailable{Cause::kBadInput,
                               fmt::format("device {}:{} is a partition of {}:{}: trace the disk",
                                           major(dev), minor(dev), major(disk), minor(disk))};
    }
  }
  try {
    Bpf();
  } catch (const std::runtime_error& e) {
    return TracerUnavailable{Cause::kNoLibrary, e.what()};
  }
  if (!MayTrace()) {
    return TracerUnavailable{Cause::kNoRights,
                             "no rights to load BPF programs (needs root, or CAP_BPF with "
                             "CAP_PERFMON)"};
  }
  std::vector<uint32_t> kernel_devices;
  for (const dev_t dev : devices) kernel_devices.push_back((major(dev) << 20) | minor(dev));
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  TraceSetup setup{kernel_devices, static_cast<uint32_t>(tgid),
                   std::bit_ceil(std::max(options.ring_bytes, page))};

  auto impl = std::make_unique<Impl>();
  std::string typed_failure;
  if (options.attach != TracerAttach::kTracepoints) {
    try {
      impl->programs = LoadTypedPrograms(setup);
      impl->attachment = "typed raw tracepoints";
    } catch (const TraceLoadError& e) {
      if (options.attach == TracerAttach::kTyped || e.cause() == Cause::kNoRights) {
        return TracerUnavailable{e.cause(), e.what()};
      }
      typed_failure = e.what();
    }
  }
  if (!impl->programs) {
    try {
      impl->programs = LoadTracepointPrograms(setup);
      impl->attachment = "tracepoints";
    } catch (const TraceLoadError& e) {
      return TracerUnavailable{e.cause(), typed_failure.empty()
                                              ? std::string(e.what())
                                              : typed_failure + "; then " + e.what()};
    }
  }
  auto ring = RecordRing::Map(impl->programs->EventsFd(), setup.ring_bytes);
  if (auto* why = std::get_if<std::string>(&ring)) {
    return TracerUnavailable{Cause::kRefused, *why};
  }
  impl->ring.emplace(std::move(std::get<RecordRing>(ring)));
  return std::unique_ptr<BlockTracer>(new BlockTracer(std::move(impl)));
}

size_t BlockTracer::Poll(TraceConsumer& consumer, std::chrono::milliseconds timeout) {
  if (!impl_->ring) return 0;
  impl_->consumer = &consumer;
  // Records are submitted without a wakeup until a quarter of the ring waits (the programs'
  // wakeup_bytes): the wait may end with records unannounced, which the consume then takes.
  impl_->ring->Wait(static_cast<int>(timeout.count()));
  const size_t consumed = impl_->Consume();
  impl_->consumer = nullptr;
  return consumed;
}

size_t BlockTracer::Drain(TraceConsumer& consumer) {
  if (!impl_->ring) return 0;
  impl_->consumer = &consumer;
  const size_t consumed = impl_->Consume();
  impl_->consumer = nullptr;
  return consumed;
}

void BlockTracer::Close() {
  if (!impl_->programs) return;
  impl_->closed = Counters();
  impl_->Free();
}

TraceCounters BlockTracer::Counters() const {
  if (!impl_->programs) return impl_->closed;
  TraceCounters counters;
  for (int i = 0; i < IOTAIL_COUNTER_SLICES; ++i) {
    const iotail_trace_counters& c = impl_->programs->Counters()[i];
    counters.block_records += LoadCounter(c.block_records);
    counters.block_dropped += LoadCounter(c.block_dropped);
    counters.uring_records += LoadCounter(c.uring_records);
    counters.uring_dropped += LoadCounter(c.uring_dropped);
    counters.untracked += LoadCounter(c.inflight_full);
    counters.rings_full += LoadCounter(c.rings_full);
  }
  counters.missed = impl_->programs->Missed();
  counters.delivered = impl_->delivered.load(std::memory_order_relaxed);
  return counters;
}

const char* BlockTracer::Attachment() const { return impl_->attachment; }

#else  // !IOTAIL_HAVE_EXPLAIN

#ifndef IOTAIL_EXPLAIN_MISSING
#define IOTAIL_EXPLAIN_MISSING "libbpf's headers, clang or bpftool"
#endif

struct BlockTracer::Impl {};

std::variant<std::unique_ptr<BlockTracer>, TracerUnavailable> BlockTracer::Open(
    std::span<const dev_t>, pid_t, const BlockTracerOptions&) {
  return TracerUnavailable{TracerUnavailable::Cause::kNotBuilt,
                           "this iotail was built without the BPF tracer (missing at build: " +
                               std::string(IOTAIL_EXPLAIN_MISSING) +
                               "; scripts/setup.sh installs libbpf-dev, clang and bpftool)"};
}
size_t BlockTracer::Poll(TraceConsumer&, std::chrono::milliseconds) { return 0; }
size_t BlockTracer::Drain(TraceConsumer&) { return 0; }
void BlockTracer::Close() {}
TraceCounters BlockTracer::Counters() const { return {}; }
const char* BlockTracer::Attachment() const { return ""; }

#endif

BlockTracer::BlockTracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockTracer::~BlockTracer() = default;

}  // namespace iotail::engine
