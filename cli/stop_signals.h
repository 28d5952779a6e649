// StopSignals: SIGINT and SIGTERM stop a command that runs jobs cleanly (`iotail run`, `iotail
// sweep`): while one is alive, the first signal sets the stop flag (the workers stop issuing and
// the run ends with its summary) and records which signal it was; a second signal takes the
// default action (terminates). The previous handlers are restored when it is destroyed. They nest:
// only the outermost one installs the handlers and clears the flag, so a driver that runs several
// runs (a sweep's steps) keeps the signal handled between them, and a run inside it sees the
// driver's flag. Made and destroyed on one thread; the flag is the process's one.
#pragma once

#include <signal.h>

#include <atomic>

namespace iotail::cli {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Set by the first signal; the run assembly's stop flag.
  static std::atomic<bool>& flag();
  // The signal that set it (0: none).
  static int signal();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace iotail::cli
