#include "engine/libnbd_loader.h"

#if IOTAIL_HAVE_LIBNBD
#include <dlfcn.h>
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace iotail::engine {
namespace {

constexpr const char* kLibrary = "libnbd.so.0";

LibNbd Load() {
  void* library = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    throw std::runtime_error(fmt::format("the nbd engine needs {} (Debian package libnbd0): {}",
                                         kLibrary, why ? why : "not found"));
  }
  // Kept loaded for the life of the process: handles and callbacks may outlive any one user.
  auto find = [&](auto& function, const char* name) {
    void* symbol = ::dlsym(library, name);
    if (symbol == nullptr) {
      throw std::runtime_error(fmt::format("{} has no {}: too old a libnbd?", kLibrary, name));
    }
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(symbol);
  };
  LibNbd l{};
  find(l.create, "nbd_create");
  find(l.close, "nbd_close");
  find(l.shutdown, "nbd_shutdown");
  find(l.aio_connect_uri, "nbd_aio_connect_uri");
  find(l.aio_is_connecting, "nbd_aio_is_connecting");
  find(l.aio_is_ready, "nbd_aio_is_ready");
  find(l.set_pread_initialize, "nbd_set_pread_initialize");
  find(l.get_errno, "nbd_get_errno");
  find(l.get_error, "nbd_get_error");
  find(l.get_size, "nbd_get_size");
  find(l.get_block_size, "nbd_get_block_size");
  find(l.is_read_only, "nbd_is_read_only");
  find(l.can_multi_conn, "nbd_can_multi_conn");
  find(l.aio_pread, "nbd_aio_pread");
  find(l.aio_pwrite, "nbd_aio_pwrite");
  find(l.aio_notify_read, "nbd_aio_notify_read");
  find(l.aio_notify_write, "nbd_aio_notify_write");
  find(l.aio_is_dead, "nbd_aio_is_dead");
  find(l.aio_is_closed, "nbd_aio_is_closed");
  find(l.aio_get_fd, "nbd_aio_get_fd");
  find(l.aio_get_direction, "nbd_aio_get_direction");
  return l;
}

}  // namespace

const LibNbd& Nbd() {
  static const LibNbd library = Load();  // a failed load throws, and the next call tries again
  return library;
}

}  // namespace iotail::engine
#endif
