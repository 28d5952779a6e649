// The nbd engine's two data paths, behind MakeNbdEngine() (engine/io/engine_nbd.cc), which connects
// and picks one in Prepare() (--nbd_path: auto, libnbd, direct):
// - MakeNbdLibnbdEngine: libnbd's asynchronous API over `handles` (connected, ready; the engine
//   owns and closes them), one nbd_aio_pread/pwrite per I/O.
// - MakeNbdDirectEngine: iotail's own transmission phase over `fds` (sockets in the transmission
//   phase after ConnectNbdDirect, engine/io/nbd_handshake.h; the engine owns and closes them):
//   every request of a Submit() goes out in one sendmsg() per connection, and one recv() into a
//   reused buffer brings in as many replies as have arrived (engine/io/nbd_wire.h parses them).
// Request slot i goes to connection i % connections on both paths. Neither allocates, locks or
// throws after construction; each is used by its worker's thread only.
#pragma once

#include <memory>
#include <vector>

#include "engine/io/io_engine.h"

struct nbd_handle;

namespace iotail::engine {

std::unique_ptr<IoEngine> MakeNbdLibnbdEngine(std::vector<nbd_handle*> handles,
                                              const EngineSetup& setup);
std::unique_ptr<IoEngine> MakeNbdDirectEngine(std::vector<int> fds, const EngineSetup& setup);

}  // namespace iotail::engine
