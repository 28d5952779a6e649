// The BPF objects behind BlockTracer (engine/explain/block_tracer.h), loaded and attached: the
// typed one (tp_btf, CO-RE) or the plain-tracepoint one, each from its bpftool skeleton embedded
// in the binary. Private to engine/explain/ (only block_tracer.cc uses it); built only with
// IOTAIL_HAVE_EXPLAIN. One owner; destroying it detaches the programs and frees the maps.
#pragma once

#if IOTAIL_HAVE_EXPLAIN
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "engine/explain/block_tracer.h"
#include "engine/explain/trace_record.h"

namespace iotail::engine {

struct TraceSetup {
  std::span<const uint32_t> kernel_devices;  // major << 20 | minor
  uint32_t tgid = 0;                         // 0: no io_uring programs
  size_t ring_bytes = 0;                     // a power of two, a multiple of the page size
  uint32_t request_entries = 0;              // the request table's, a power of two
  // The typed programs' insert hook: needed only where a request may lack its allocation time.
  bool typed_insert = true;
};

// A refusal while loading or attaching, with its cause.
class TraceLoadError : public std::runtime_error {
 public:
  TraceLoadError(TracerUnavailable::Cause cause, const std::string& what)
      : std::runtime_error(what), cause_(cause) {}
  TracerUnavailable::Cause cause() const { return cause_; }

 private:
  TracerUnavailable::Cause cause_;
};

class TracePrograms {
 public:
  virtual ~TracePrograms() = default;
  virtual int EventsFd() const = 0;    // the ring buffer map
  virtual int RequestsFd() const = 0;  // the request table (an mmapable array)
  // The programs' .bss (mapped): IOTAIL_COUNTER_SLICES slices, to be summed.
  virtual const iotail_trace_counters* Counters() const = 0;
  // Runs the kernel skipped: a tracepoint that fired while a BPF program was already running on
  // that CPU (bpf_prog_info.recursion_misses, Linux 5.12+), summed over the attached programs.
  virtual uint64_t Missed() const = 0;
};

// Each throws TraceLoadError (libbpf's own words included) when the kernel refuses.
std::unique_ptr<TracePrograms> LoadTypedPrograms(const TraceSetup& setup);
std::unique_ptr<TracePrograms> LoadTracepointPrograms(const TraceSetup& setup);

}  // namespace iotail::engine
#endif
