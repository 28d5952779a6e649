// The engine table: one row per I/O engine iotail runs (engine/io/engine_table.cc), saying
// everything the rest of iotail needs to know of it: fio's name, the function that makes it (in
// the engine's own file, engine/io/engine_*.cc), its traits (synchronous, a file operation, the
// library it needs), the engine options it takes (the "only with --ioengine=X" checks of
// JobSpec::Validate) and its rank for the zero-argument default benchmark. From the rows come the
// names ParseEngineKind takes and EngineKindName prints, `--ioengine`'s help and the list of
// supported engines in messages, the predicates of JobSpec (Synchronous, FileOperations, ...),
// which engines take an option (its help's prefix, its check), and the engine the default
// benchmark runs (AvailableEngines, engine/io/io_engine.h). Adding an engine is its enumerator and
// its row here, and its file (docs/ARCHITECTURE.md, "Adding an engine"). The table is constant;
// every function here is pure and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace iotail::engine {

class IoEngine;

// fio's engines that iotail runs, in the table's order (its rows are indexed by these values: the
// order is --ioengine's help's and the messages').
enum class EngineKind : uint8_t {
  kSync,        // read(2)/write(2) after lseek(2)
  kPsync,       // pread(2)/pwrite(2): fio's default
  kVsync,       // readv(2)/writev(2) after lseek(2)
  kPvsync,      // preadv(2)/pwritev(2)
  kPvsync2,     // preadv2(2)/pwritev2(2) with RWF_* flags (hipri, nowait)
  kIoUring,     // io_uring (liburing)
  kLibaio,      // Linux native AIO (libaio)
  kPosixAio,    // glibc's aio_read(3)/aio_write(3)
  kMmap,        // memcpy to and from the file mapped with mmap(2)
  kFalloc,      // fallocate(2) over each I/O's range (engine/io/engine_fileop.cc)
  kFtruncate,   // ftruncate(2) to each write's offset
  kE4defrag,    // ext4's EXT4_IOC_MOVE_EXT from a donor file (engine/io/engine_e4defrag.cc)
  kFileCreate,  // fio's file and directory operation engines (engine/io/engine_fileop.cc): the
  kFileStat,    // measured operation is the file's "open" (open with O_CREAT, stat, unlink,
  kFileDelete,  // mkdir, stat of a directory, rmdir), once per file per pass; their I/Os move
  kDirCreate,   // nothing
  kDirStat,
  kDirDelete,
  kNull,  // no I/O at all: each request completes at once
  kNbd,   // an NBD server's export (libnbd, or iotail's own transmission phase)
};

// What an engine is, as bits of EngineRow::traits.
enum EngineTrait : uint32_t {
  // fio's FIO_SYNCIO: each I/O is done inside its call, so the engine runs at depth 1
  // (JobSpec::Normalize).
  kSynchronousTrait = 1u << 0,
  // fio counts its I/Os as issued bytes when they are queued (io_queue_event with FIO_Q_QUEUED),
  // so a time_based loop of it ends after `size` bytes (JobSpec::CountsIssuedBytes).
  kCountsIssuedBytesTrait = 1u << 1,
  // Changes the file whatever the direction and transfers no data (falloc, ftruncate, e4defrag).
  kChangesFilesTrait = 1u << 2,
  // Times each file's operation, its I/Os moving nothing (fio's FIO_FAKEIO | FIO_NOSTATS).
  kFileOperationTrait = 1u << 3,
  kOnDirectoriesTrait = 1u << 4,  // a file operation whose files are directories
  // Its target is a server at --uri, not files: only connecting tells whether it can run.
  kServerTargetTrait = 1u << 5,
};

// The engine options (fio's options of some engines only), as bits of EngineRow::options: the
// rows that take one are where JobSpec::Validate accepts it.
enum EngineOption : uint32_t {
  kSqthreadPollOption = 1u << 0,  // --sqthread_poll
  kHipriOption = 1u << 1,         // --hipri
  kNowaitOption = 1u << 2,        // --nowait
  kUncachedOption = 1u << 3,      // --uncached
  kCmdprioOption = 1u << 4,       // --cmdprio_percentage, --cmdprio_class, --cmdprio, ...bssplit
  kNbdOption = 1u << 5,           // --uri, --nbd_timeout, --nbd_path, --nbd_conns
  kDonorOption = 1u << 6,         // --donorname, --inplace
  kStatTypeOption = 1u << 7,      // --stat_type
};

using EngineMaker = std::unique_ptr<IoEngine> (*)();

struct EngineRow {
  EngineKind kind;
  const char* name;   // fio's
  const char* alias;  // another name it is known by (iotail's own), or nullptr
  // The engine, from its file; nullptr when the build left it out (its library was not found).
  EngineMaker make;
  const char* library;  // the library it needs at build time, or nullptr
  uint32_t traits;      // EngineTrait bits
  uint32_t options;     // EngineOption bits: the options it takes
  // The default benchmark's order of preference (1 first) among the engines that can run here;
  // 0: run only when asked for.
  int preference;
};

std::span<const EngineRow> EngineTable();
const EngineRow& EngineRowOf(EngineKind kind);
inline bool HasTrait(EngineKind kind, EngineTrait trait) {
  return (EngineRowOf(kind).traits & trait) != 0;
}
inline bool TakesOption(EngineKind kind, EngineOption option) {
  return (EngineRowOf(kind).options & option) != 0;
}
// The engines that take `option`, in table order, joined as "a, b or c" (last_joint " or ") or
// "a, b, c" (last_joint ", ").
std::string EnginesTaking(EngineOption option, std::string_view last_joint);
// Every engine's name, in table order, joined by `joint`.
std::string EngineNames(std::string_view joint);

// UsageError naming --ioengine and the engine: fio's engines that iotail does not run, fio's
// NAME:... and external forms, and names that are no engine of fio's.
EngineKind ParseEngineKind(const std::string& text);
std::string EngineKindName(EngineKind kind);
// "--FLAGS: only with --ioengine=A or B (not --ioengine=C)" and `why`: the refusal of an engine
// option given with an engine that does not take it.
std::string OnlyWithEngines(std::string_view flags, EngineOption option, EngineKind engine,
                            std::string_view why = "");

}  // namespace iotail::engine
