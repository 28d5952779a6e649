#include "engine/explain/block_tracer.h"

#include <sys/sysmacros.h>

#include <atomic>
#include <bit>
#include <cstring>

#if IOTAIL_HAVE_EXPLAIN
#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
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

// Whether the requests of whole disk `dev` all carry their allocation time (start_time_ns), which
// marks their entry into the block layer: the kernel sets it when the queue keeps I/O statistics
// (queue/iostats, on by default) or has a scheduler (blk_mq_need_time_stamp), and otherwise leaves
// a reused request's old value. When every traced disk's do, the typed programs read it and need
// no insert hook (one tracepoint less per request); when one's do not, or it cannot be read, they
// mark the entry at insert.
bool CarriesAllocationTime(dev_t dev) {
  const std::string queue = fmt::format("/sys/dev/block/{}:{}/queue/", major(dev), minor(dev));
  auto read = [&](const char* name) {
    std::ifstream in(queue + name);
    std::string text;
    std::getline(in, text);
    return in || in.eof() ? text : std::string();
  };
  const std::string scheduler = read("scheduler");
  return read("iostats") == "1" ||
         (!scheduler.empty() && scheduler.find("[none]") == std::string::npos);
}

uint64_t LoadCounter(const uint64_t& counter) {
  return __atomic_load_n(&counter, __ATOMIC_RELAXED);
}

}  // namespace

struct BlockTracer::Impl {
  std::unique_ptr<TracePrograms> programs;
  std::optional<RecordRing> ring;
  void* table = nullptr;  // the request table, mapped
  size_t table_bytes = 0;
  uint32_t table_mask = 0;
  const char* attachment = "";
  TraceConsumer* consumer = nullptr;  // during Poll and Drain
  std::atomic<uint64_t> delivered{0};
  TraceCounters closed;  // the counters when Close() freed the programs

  ~Impl() { Free(); }
  void Free() {
    if (table != nullptr) ::munmap(table, table_bytes);
    table = nullptr;
    ring.reset();
    programs.reset();
  }

  // Hands one record to the consumer.
  void OnRecord(const void* data, size_t size) {
    uint32_t kind = 0;
    if (size < sizeof(kind)) return;
    std::memcpy(&kind, data, sizeof(kind));
    if ((kind == IOTAIL_TRACE_URING_SUBMIT || kind == IOTAIL_TRACE_URING_COMPLETE) &&
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
      options.ring_bytes > (size_t{1} << 30) || options.request_entries < 64 ||
      options.request_entries > (uint32_t{1} << 22) ||
      !std::has_single_bit(options.request_entries)) {
    return TracerUnavailable{
        Cause::kBadInput,
        fmt::format("nothing to trace, or too much ({} devices, process {}, a "
                    "ring buffer of {} bytes, {} request entries)",
                    devices.size(), tgid, options.ring_bytes, options.request_entries)};
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
                   std::bit_ceil(std::max(options.ring_bytes, page)), options.request_entries};
  setup.typed_insert = !std::all_of(devices.begin(), devices.end(), CarriesAllocationTime);

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
  impl->table_bytes =
      (size_t{options.request_entries} * sizeof(iotail_request_entry) + page - 1) / page * page;
  impl->table = ::mmap(nullptr, impl->table_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                       impl->programs->RequestsFd(), 0);
  if (impl->table == MAP_FAILED) {
    impl->table = nullptr;
    return TracerUnavailable{Cause::kRefused,
                             fmt::format("cannot map the request table: {}", std::strerror(errno))};
  }
  impl->table_mask = options.request_entries - 1;
  return std::unique_ptr<BlockTracer>(new BlockTracer(std::move(impl)));
}

RequestTable BlockTracer::Requests() const {
  if (impl_->table == nullptr) return {};
  return RequestTable(static_cast<iotail_request_entry*>(impl_->table), impl_->table_mask);
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
    counters.block_unmatched += LoadCounter(c.block_unmatched);
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
RequestTable BlockTracer::Requests() const { return {}; }
size_t BlockTracer::Poll(TraceConsumer&, std::chrono::milliseconds) { return 0; }
size_t BlockTracer::Drain(TraceConsumer&) { return 0; }
void BlockTracer::Close() {}
TraceCounters BlockTracer::Counters() const { return {}; }
const char* BlockTracer::Attachment() const { return ""; }

#endif

BlockTracer::BlockTracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockTracer::~BlockTracer() = default;

}  // namespace iotail::engine
