// NBD targets: what `iotail run --ioengine=nbd --uri=URI` needs to know of an export before the
// run, and the one way every part of iotail connects to a server.
//
// ConnectNbd() opens a handle to `uri` (nbd://HOST[:PORT]/EXPORT or nbd+unix:///EXPORT?socket=P,
// as libnbd's nbd_connect_uri takes them) with read buffers left as they are (no pre-zeroing).
// It connects without blocking (nbd_aio_connect_uri, then the socket polled in slices of 50 ms
// while libnbd's state machine runs), so that a server that accepts the connection but never
// completes the NBD handshake cannot hang the run: after `limits.timeout_ns` (--nbd_timeout,
// default 10 s) it is a std::system_error (ETIMEDOUT) naming the URI and --nbd_timeout, and once
// `*limits.stop` is set (SIGINT, SIGTERM) a stats::Interrupted naming the URI. Only a host name's
// lookup (getaddrinfo, inside nbd_aio_connect_uri) still blocks. A refused or failed connection is
// a std::system_error naming the URI and libnbd's reason; a malformed URI is a UsageError.
// ProbeNbdExport() connects once and reads the export's size, block-size constraints, read-only
// flag and multi-conn support, then checks the job against them: block sizes and the offset must
// be multiples of the server's minimum block size and at most its maximum (UsageError naming --bs
// or --offset), a block must fit in the export (UsageError naming --bs and both sizes), writes
// need a writable export, and writing to an export whose first MiB carries a filesystem,
// partition table or other signature needs --allow-destructive (as for devices); that first MiB is
// read under the same limits. With --nbd_conns above 1, a job that writes needs a server that
// advertises multi-conn (UsageError naming --nbd_conns). Both throw
// UsageError("--ioengine: nbd ... not built in") when iotail was built without libnbd.
// Both are libnbd's on every --nbd_path: the engine's direct path connects on its own
// (engine/io/nbd_handshake.h), because a libnbd handle's socket may not be used behind its back.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "engine/job_spec.h"

struct nbd_handle;

namespace iotail::engine {

struct NbdExport {
  uint64_t size = 0;
  uint32_t min_block = 0;  // 0: the server sets no constraint
  uint32_t preferred_block = 0;
  uint32_t max_block = 0;
  bool read_only = false;
  bool multi_conn = false;
};

// Waits on a server's socket are polled in slices of this, so a stop request is seen within it.
inline constexpr uint64_t kNbdPollSliceNs = 50'000'000;

// How long connecting to a server may take, and what ends the wait early.
struct NbdLimits {
  uint64_t timeout_ns = 0;                  // the connection and handshake (0: no limit)
  const std::atomic<bool>* stop = nullptr;  // once set, give up (stats::Interrupted)
};

nbd_handle* ConnectNbd(const std::string& uri, const NbdLimits& limits);
// Connects under spec.nbd.timeout_ns and `stop`.
NbdExport ProbeNbdExport(const JobSpec& spec, const std::atomic<bool>* stop);

}  // namespace iotail::engine
