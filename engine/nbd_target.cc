#include "engine/nbd_target.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "engine/target.h"
#include "stats/core/errors.h"

#if IOTAIL_HAVE_LIBNBD
#include "engine/libnbd_loader.h"
#endif

namespace iotail::engine {

#if IOTAIL_HAVE_LIBNBD

namespace {

// libnbd's last error without its trailing ": <strerror>" (std::system_error adds that again).
std::string NbdError(int err) {
  std::string why = Nbd().get_error() != nullptr ? Nbd().get_error() : "unknown error";
  const std::string tail = std::string(": ") + std::strerror(err);
  if (why.size() > tail.size() && why.compare(why.size() - tail.size(), tail.size(), tail) == 0) {
    why.resize(why.size() - tail.size());
  }
  return why;
}

}  // namespace

nbd_handle* ConnectNbd(const std::string& uri) {
  nbd_handle* h = Nbd().create();
  if (h == nullptr) {
    throw std::system_error(Nbd().get_errno() ? Nbd().get_errno() : ENOMEM, std::generic_category(),
                            fmt::format("nbd: cannot create a handle: {}", Nbd().get_error()));
  }
  Nbd().set_pread_initialize(h, false);
  if (Nbd().connect_uri(h, uri.c_str()) == -1) {
    const int err = Nbd().get_errno() ? Nbd().get_errno() : ECONNREFUSED;
    const std::string why = NbdError(err);
    Nbd().close(h);
    if (err == EINVAL) {  // a malformed URI: the user's to fix (exit 2)
      throw stats::UsageError(fmt::format("--uri: '{}' is not an NBD URI: {}", uri, why));
    }
    throw std::system_error(err, std::generic_category(),
                            fmt::format("--uri: cannot connect to '{}': {}", uri, why));
  }
  return h;
}

NbdExport ProbeNbdExport(const JobSpec& spec) {
  nbd_handle* h = ConnectNbd(spec.uri);
  struct Closer {
    nbd_handle* h;
    ~Closer() {
      Nbd().shutdown(h, 0);
      Nbd().close(h);
    }
  } closer{h};
  NbdExport e;
  const int64_t size = Nbd().get_size(h);
  if (size < 0) {
    throw std::system_error(
        Nbd().get_errno() ? Nbd().get_errno() : EIO, std::generic_category(),
        fmt::format("--uri: '{}': export size: {}", spec.uri, Nbd().get_error()));
  }
  e.size = static_cast<uint64_t>(size);
  auto block = [&](int which) {
    const int64_t v = Nbd().get_block_size(h, which);
    return v > 0 ? static_cast<uint32_t>(v) : 0u;
  };
  e.min_block = block(LIBNBD_SIZE_MINIMUM);
  e.preferred_block = block(LIBNBD_SIZE_PREFERRED);
  e.max_block = block(LIBNBD_SIZE_MAXIMUM);
  e.read_only = Nbd().is_read_only(h) == 1;
  e.multi_conn = Nbd().can_multi_conn(h) == 1;

  if (e.min_block > 1) {
    auto check = [&](uint32_t bs) {
      if (bs % e.min_block != 0) {
        throw stats::UsageError(fmt::format(
            "--bs: the NBD server at '{}' takes only multiples of {} bytes; {} is not one",
            spec.uri, e.min_block, bs));
      }
    };
    check(spec.MinBlockSize());
    check(spec.MaxBlockSize());
    for (const BlockSizeShare& s : spec.bssplit) check(s.bs);
    for (const BlockSizeShare& s : spec.bssplit_w) check(s.bs);
    if (spec.offset % e.min_block != 0) {
      throw stats::UsageError(
          fmt::format("--offset: the NBD server needs a multiple of {} bytes", e.min_block));
    }
  }
  if (e.max_block != 0 && spec.MaxBlockSize() > e.max_block) {
    throw stats::UsageError(fmt::format(
        "--bs: the NBD server at '{}' takes at most {} bytes per request", spec.uri, e.max_block));
  }
  if (spec.HasWrites()) {
    if (e.read_only) {
      throw stats::UsageError(
          fmt::format("--rw={}: the export at '{}' is read-only", RwModeName(spec.rw), spec.uri));
    }
    if (!spec.allow_destructive) {
      const size_t head = static_cast<size_t>(std::min<uint64_t>(e.size, 1 << 20));
      std::vector<unsigned char> buf(head);
      if (head > 0 && Nbd().pread(h, buf.data(), head, 0, 0) == -1) {
        throw std::system_error(
            Nbd().get_errno() ? Nbd().get_errno() : EIO, std::generic_category(),
            fmt::format("--uri: '{}': reading the first MiB: {}", spec.uri, Nbd().get_error()));
      }
      const std::string sig = SignatureInImage(buf.data(), buf.size());
      if (!sig.empty()) {
        throw stats::UsageError(
            fmt::format("--uri: the export at '{}' holds {}; writing would destroy it (pass "
                        "--allow-destructive if that is intended)",
                        spec.uri, sig));
      }
    }
  }
  return e;
}

#else

nbd_handle* ConnectNbd(const std::string&) {
  throw stats::UsageError("--ioengine: nbd is not built in (iotail was built without libnbd)");
}
NbdExport ProbeNbdExport(const JobSpec&) {
  throw stats::UsageError("--ioengine: nbd is not built in (iotail was built without libnbd)");
}

#endif

}  // namespace iotail::engine
