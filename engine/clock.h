// Clock: the monotonic nanosecond clock of the hot path.
//
// Two sources, chosen once per process: the invariant TSC (rdtsc, about 10 ns a read), calibrated
// against CLOCK_MONOTONIC when /proc/cpuinfo shows constant_tsc and nonstop_tsc, or
// clock_gettime(CLOCK_MONOTONIC) through the vDSO (about 25 ns) otherwise. NowNs() values of either
// source are in CLOCK_MONOTONIC's time base (the TSC is anchored to it at calibration), so they can
// be compared with clock_gettime(CLOCK_MONOTONIC) readings to within the calibration error
// (about a microsecond over seconds). The choice can be forced with IOTAIL_CLOCK=tsc|monotonic.
// Thread-safe after Init(); Init() is idempotent and cheap after the first call.
#pragma once

#include <cstdint>
#include <ctime>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace iotail::engine {

__extension__ typedef unsigned __int128 Uint128;

class Clock {
 public:
  enum class Source { kTsc, kMonotonic };

  // Chooses and calibrates the source (about 20 ms the first time).
  static void Init();
  // Stamps from CLOCK_MONOTONIC itself from now on (after Init, while no thread reads the clock):
  // --explain compares them with the kernel's tracepoint times, which the TSC's calibration (over
  // 20 ms) would let drift by microseconds per second of run.
  static void UseMonotonic() { state_.source = Source::kMonotonic; }
  static Source source() { return state_.source; }
  static std::string_view SourceName() {
    return state_.source == Source::kTsc ? "tsc" : "monotonic";
  }

  static uint64_t NowNs() {
#if defined(__x86_64__)
    if (state_.source == Source::kTsc) {
      const uint64_t ticks = __rdtsc() - state_.tsc_base;
      return state_.ns_base +
             static_cast<uint64_t>((static_cast<Uint128>(ticks) * state_.mult) >> 32);
    }
#endif
    return MonotonicNs();
  }

  static uint64_t MonotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
  }
  static uint64_t RealtimeNs() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
  }

 private:
  struct State {
    Source source = Source::kMonotonic;
    uint64_t tsc_base = 0;
    uint64_t ns_base = 0;
    uint64_t mult = 0;  // ns per tick << 32
  };
  static State state_;
};

}  // namespace iotail::engine
