#include "engine/libnbd_loader.h"

#if IOTAIL_HAVE_LIBNBD
#include <stdexcept>

#include "engine/shared_library.h"

namespace iotail::engine {
namespace {

LibNbd Load() {
  const SharedLibrary<std::runtime_error> library({"libnbd.so.0", "libnbd0", "libnbd"},
                                                  "the nbd engine");
  LibNbd l{};
  library.Bind(l.create, "nbd_create");
  library.Bind(l.close, "nbd_close");
  library.Bind(l.shutdown, "nbd_shutdown");
  library.Bind(l.aio_connect_uri, "nbd_aio_connect_uri");
  library.Bind(l.aio_is_connecting, "nbd_aio_is_connecting");
  library.Bind(l.aio_is_ready, "nbd_aio_is_ready");
  library.Bind(l.set_pread_initialize, "nbd_set_pread_initialize");
  library.Bind(l.get_errno, "nbd_get_errno");
  library.Bind(l.get_error, "nbd_get_error");
  library.Bind(l.get_size, "nbd_get_size");
  library.Bind(l.get_block_size, "nbd_get_block_size");
  library.Bind(l.is_read_only, "nbd_is_read_only");
  library.Bind(l.can_multi_conn, "nbd_can_multi_conn");
  library.Bind(l.aio_pread, "nbd_aio_pread");
  library.Bind(l.aio_pwrite, "nbd_aio_pwrite");
  library.Bind(l.aio_notify_read, "nbd_aio_notify_read");
  library.Bind(l.aio_notify_write, "nbd_aio_notify_write");
  library.Bind(l.aio_is_dead, "nbd_aio_is_dead");
  library.Bind(l.aio_is_closed, "nbd_aio_is_closed");
  library.Bind(l.aio_get_fd, "nbd_aio_get_fd");
  library.Bind(l.aio_get_direction, "nbd_aio_get_direction");
  return l;
}

}  // namespace

const LibNbd& Nbd() {
  static const LibNbd library = Load();  // a failed load throws, and the next call tries again
  return library;
}

}  // namespace iotail::engine
#endif
