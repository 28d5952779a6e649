// NBD targets: what `iotail run --ioengine=nbd --uri=URI` needs to know of an export before the
// run, and the one way every part of iotail connects to a server.
//
// ConnectNbd() opens a handle to `uri` (nbd://HOST[:PORT]/EXPORT or nbd+unix:///EXPORT?socket=P,
// as libnbd's nbd_connect_uri takes them) with read buffers left as they are (no pre-zeroing);
// a refused or failed connection is a std::system_error naming the URI and libnbd's reason.
// ProbeNbdExport() connects once and reads the export's size, block-size constraints, read-only
// flag and multi-conn support, then checks the job against them: block sizes and the offset must
// be multiples of the server's minimum block size and at most its maximum (UsageError naming --bs
// or --offset), writes need a writable export, and writing to an export whose first MiB carries a
// filesystem, partition table or other signature needs --allow-destructive (as for devices).
// Both throw UsageError("--ioengine: nbd ... not built in") when iotail was built without libnbd.
#pragma once

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

nbd_handle* ConnectNbd(const std::string& uri);
NbdExport ProbeNbdExport(const JobSpec& spec);

}  // namespace iotail::engine
