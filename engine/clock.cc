#include "engine/clock.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

namespace iotail::engine {

Clock::State Clock::state_;

namespace {

bool InvariantTsc() {
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
#endif
  return false;
}

}  // namespace

void Clock::Init() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* forced = std::getenv("IOTAIL_CLOCK");
    bool use_tsc = InvariantTsc();
    if (forced != nullptr && std::string_view(forced) == "monotonic") use_tsc = false;
#if defined(__x86_64__)
    if (use_tsc) {
      // Anchor at one instant, measure the tick rate over ~20 ms.
      const uint64_t ns0 = MonotonicNs();
      const uint64_t t0 = __rdtsc();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const uint64_t ns1 = MonotonicNs();
      const uint64_t t1 = __rdtsc();
      if (t1 > t0 && ns1 > ns0) {
        State s;
        s.source = Source::kTsc;
        s.tsc_base = t0;
        s.ns_base = ns0;
        s.mult = static_cast<uint64_t>((static_cast<Uint128>(ns1 - ns0) << 32) / (t1 - t0));
        state_ = s;
        return;
      }
    }
#endif
    state_.source = Source::kMonotonic;
  });
}

}  // namespace iotail::engine
