// Nbd(): the libnbd functions iotail calls, looked up with dlopen("libnbd.so.0") the first time a
// run uses an NBD export. Linked at build time, libnbd and what it brings (GnuTLS, libxml2, ICU and
// ten more libraries) made every iotail command start about 5 ms later, a tenth of a `pctiles`
// run on the benchmark's logs; loaded on demand, only NBD runs pay for it. Built only with libnbd's
// header (IOTAIL_HAVE_LIBNBD). Thread-safe: the lookup runs once. Throws std::runtime_error naming
// the library and the loader's reason when it cannot be loaded or lacks a function.
#pragma once

#if IOTAIL_HAVE_LIBNBD
#include <libnbd.h>

namespace iotail::engine {

struct LibNbd {
  decltype(&::nbd_create) create;
  decltype(&::nbd_close) close;
  decltype(&::nbd_shutdown) shutdown;
  decltype(&::nbd_aio_connect_uri) aio_connect_uri;
  decltype(&::nbd_aio_is_connecting) aio_is_connecting;
  decltype(&::nbd_aio_is_ready) aio_is_ready;
  decltype(&::nbd_set_pread_initialize) set_pread_initialize;
  decltype(&::nbd_get_errno) get_errno;
  decltype(&::nbd_get_error) get_error;
  decltype(&::nbd_get_size) get_size;
  decltype(&::nbd_get_block_size) get_block_size;
  decltype(&::nbd_is_read_only) is_read_only;
  decltype(&::nbd_can_multi_conn) can_multi_conn;
  decltype(&::nbd_aio_pread) aio_pread;
  decltype(&::nbd_aio_pwrite) aio_pwrite;
  decltype(&::nbd_aio_notify_read) aio_notify_read;
  decltype(&::nbd_aio_notify_write) aio_notify_write;
  decltype(&::nbd_aio_is_dead) aio_is_dead;
  decltype(&::nbd_aio_is_closed) aio_is_closed;
  decltype(&::nbd_aio_get_fd) aio_get_fd;
  decltype(&::nbd_aio_get_direction) aio_get_direction;
};

const LibNbd& Nbd();

}  // namespace iotail::engine
#endif
