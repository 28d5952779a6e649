#include "engine/io/io_engine.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <utility>

#include "stats/core/errors.h"

namespace iotail::engine {

std::unique_ptr<IoEngine> ConstructEngine(EngineKind kind) {
  const EngineMaker make = EngineRowOf(kind).make;
  return make != nullptr ? make() : nullptr;
}

int IoEngine::ReapTimeout(std::span<IoCompletion> out, uint32_t min_complete, uint64_t timeout_ns) {
  const int n = Reap(out, 0);
  if (n != 0 || min_complete == 0) return n;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000u);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000u);
  nanosleep(&ts, nullptr);  // an interrupting signal only ends the wait early
  return Reap(out, 0);
}

std::string ProbeEngine(EngineKind kind) {
  std::unique_ptr<IoEngine> engine = ConstructEngine(kind);
  if (engine == nullptr) {
    const char* library = EngineRowOf(kind).library;
    return library != nullptr ? fmt::format("not built in: iotail was built without {}", library)
                              : "not built in";
  }
  // Its target is a server: checked when connecting (--uri).
  if (HasTrait(kind, kServerTargetTrait)) return "";
  // The same setup as a real run, on a tiny queue over /dev/null.
  const int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd < 0) return "cannot open /dev/null";
  alignas(4096) static thread_local char buffer[4096 * 2];
  EngineSetup setup;
  setup.fds = {fd};
  setup.depth = 2;
  setup.buffers = buffer;
  setup.buffer_size = 4096;
  std::string why;
  try {
    engine->Prepare(setup);
  } catch (const std::exception& e) {
    why = e.what();
  }
  engine.reset();
  close(fd);
  return why;
}

std::vector<EngineKind> AvailableEngines() {
  // The default benchmark's choices by preference, then the others in the table's order; not the
  // engines of a server, which only connecting can probe.
  std::vector<const EngineRow*> rows;
  for (const EngineRow& row : EngineTable()) {
    if ((row.traits & kServerTargetTrait) == 0) rows.push_back(&row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const EngineRow* a, const EngineRow* b) {
    const int pa = a->preference != 0 ? a->preference : INT32_MAX;
    const int pb = b->preference != 0 ? b->preference : INT32_MAX;
    return pa < pb;
  });
  std::vector<EngineKind> out;
  for (const EngineRow* row : rows) {
    if (ProbeEngine(row->kind).empty()) out.push_back(row->kind);
  }
  return out;
}

std::unique_ptr<IoEngine> MakeEngine(EngineKind kind) {
  const std::string why = ProbeEngine(kind);
  if (!why.empty()) {
    std::string available;
    for (EngineKind k : AvailableEngines()) {
      if (!available.empty()) available += ", ";
      available += EngineKindName(k);
    }
    throw stats::UsageError(fmt::format("--ioengine: {} is not available here ({}); available: {}",
                                        EngineKindName(kind), why, available));
  }
  return ConstructEngine(kind);
}

}  // namespace iotail::engine
