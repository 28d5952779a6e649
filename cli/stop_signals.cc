#include "cli/stop_signals.h"

namespace iotail::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
std::atomic<int> g_depth{0};  // StopSignals alive (nested)

extern "C" void OnStopSignal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
}

}  // namespace

StopSignals::StopSignals() {
  if (g_depth.fetch_add(1) > 0) return;
  g_stop = false;
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a second signal takes the default action (terminates)
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  if (g_depth.fetch_sub(1) > 1) return;
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

std::atomic<bool>& StopSignals::flag() { return g_stop; }

int StopSignals::signal() { return g_signal.load(); }

}  // namespace iotail::cli
