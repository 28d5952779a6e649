#include "engine/io/io_engine.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <exception>
#include <utility>

#include "stats/core/errors.h"

namespace iotail::engine {

std::unique_ptr<IoEngine> ConstructEngine(EngineKind kind) {
  using Make = std::unique_ptr<IoEngine> (*)();
  // The engines of this build: one whose library was not found at build time is missing.
  static const std::pair<EngineKind, Make> kMakers[] = {
#if IOTAIL_HAVE_LIBURING
    {EngineKind::kIoUring, MakeIoUringEngine},
#endif
#if IOTAIL_HAVE_LIBAIO
    {EngineKind::kLibaio, MakeLibaioEngine},
#endif
#if IOTAIL_HAVE_LIBNBD
    {EngineKind::kNbd, MakeNbdEngine},
#endif
    {EngineKind::kPsync, MakePsyncEngine},
    {EngineKind::kSync, MakeSyncEngine},
    {EngineKind::kVsync, MakeVsyncEngine},
    {EngineKind::kPvsync, MakePvsyncEngine},
    {EngineKind::kPvsync2, MakePvsync2Engine},
    {EngineKind::kPosixAio, MakePosixAioEngine},
    {EngineKind::kMmap, MakeMmapEngine},
    {EngineKind::kFalloc, MakeFallocEngine},
    {EngineKind::kFtruncate, MakeFtruncateEngine},
    {EngineKind::kE4defrag, MakeE4defragEngine},
    {EngineKind::kFileCreate, [] { return MakeFileOperationEngine(EngineKind::kFileCreate); }},
    {EngineKind::kFileStat, [] { return MakeFileOperationEngine(EngineKind::kFileStat); }},
    {EngineKind::kFileDelete, [] { return MakeFileOperationEngine(EngineKind::kFileDelete); }},
    {EngineKind::kDirCreate, [] { return MakeFileOperationEngine(EngineKind::kDirCreate); }},
    {EngineKind::kDirStat, [] { return MakeFileOperationEngine(EngineKind::kDirStat); }},
    {EngineKind::kDirDelete, [] { return MakeFileOperationEngine(EngineKind::kDirDelete); }},
    {EngineKind::kNull, MakeNullEngine}
  };
  for (const auto& [k, make] : kMakers) {
    if (k == kind) return make();
  }
  return nullptr;
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
  if (engine == nullptr) return "not built in";
  if (kind == EngineKind::kNbd) return "";  // needs a server: checked when connecting (--uri)
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
  std::vector<EngineKind> out;
  for (EngineKind k :
       {EngineKind::kIoUring, EngineKind::kLibaio, EngineKind::kPsync, EngineKind::kPvsync,
        EngineKind::kPvsync2, EngineKind::kSync, EngineKind::kVsync, EngineKind::kPosixAio,
        EngineKind::kMmap, EngineKind::kFalloc, EngineKind::kFtruncate, EngineKind::kE4defrag,
        EngineKind::kFileCreate, EngineKind::kFileStat, EngineKind::kFileDelete,
        EngineKind::kDirCreate, EngineKind::kDirStat, EngineKind::kDirDelete, EngineKind::kNull}) {
    if (ProbeEngine(k).empty()) out.push_back(k);
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
