#include "engine/nbd_target.h"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <system_error>
#include <vector>

#include "engine/clock.h"
#include "engine/io/nbd_handshake.h"
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

// Lets libnbd's state machine run on `h` (polling its socket in the direction it asks for) until
// done() is true. Throws stats::Interrupted once *limits.stop is set, std::system_error(ETIMEDOUT)
// when limits.timeout_ns passes first, and std::system_error with libnbd's reason when the
// connection fails. `doing` and `failed` word the messages ("connecting to", "cannot connect to").
template <typename Done>
void RunUntil(nbd_handle* h, Done done, const NbdLimits& limits, const std::string& uri,
              const char* doing, const char* failed) {
  const uint64_t start = Clock::MonotonicNs();
  while (!done()) {
    if (limits.stop != nullptr && limits.stop->load()) {
      throw stats::Interrupted(fmt::format("interrupted while {} '{}'", doing, uri));
    }
    const uint64_t now = Clock::MonotonicNs();
    if (limits.timeout_ns != 0 && now - start >= limits.timeout_ns) {
      throw std::system_error(
          ETIMEDOUT, std::generic_category(),
          fmt::format("--uri: {} '{}': the server did not answer within {:g} s (--nbd_timeout)",
                      failed, uri, static_cast<double>(limits.timeout_ns) / 1e9));
    }
    uint64_t slice = kNbdPollSliceNs;
    if (limits.timeout_ns != 0) slice = std::min(slice, limits.timeout_ns - (now - start));
    const unsigned dir = Nbd().aio_get_direction(h);
    pollfd p{Nbd().aio_get_fd(h), 0, 0};  // no socket yet (fd -1): poll just waits
    if (dir & LIBNBD_AIO_DIRECTION_READ) p.events |= POLLIN;
    if (dir & LIBNBD_AIO_DIRECTION_WRITE) p.events |= POLLOUT;
    const timespec ts{static_cast<time_t>(slice / 1'000'000'000u),
                      static_cast<long>(slice % 1'000'000'000u)};
    const int rc = ppoll(&p, 1, &ts, nullptr);
    if (rc < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("--uri: {} '{}': poll", failed, uri));
    }
    if (rc <= 0) continue;
    int nrc = 0;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) nrc = Nbd().aio_notify_read(h);
    if (nrc == 0 && (p.revents & POLLOUT)) nrc = Nbd().aio_notify_write(h);
    if (nrc == -1) {
      const int err = Nbd().get_errno() ? Nbd().get_errno() : ECONNRESET;
      throw std::system_error(err, std::generic_category(),
                              fmt::format("--uri: {} '{}': {}", failed, uri, NbdError(err)));
    }
  }
}

// Reads `len` bytes at offset 0 of the export into `buf` under `limits`. Throws as RunUntil, or
// std::system_error with the server's error. On a throw the read may still be in flight: close the
// handle before `buf` is reused.
void ReadHead(nbd_handle* h, void* buf, size_t len, const NbdLimits& limits,
              const std::string& uri) {
  struct Result {
    bool done = false;
    int error = 0;
  } result;
  const nbd_completion_callback cb{.callback =
                                       [](void* user_data, int* error) {
                                         auto* r = static_cast<Result*>(user_data);
                                         r->done = true;
                                         r->error = *error;
                                         return 1;
                                       },
                                   .user_data = &result,
                                   .free = nullptr};
  if (Nbd().aio_pread(h, buf, len, 0, cb, 0) == -1) {
    const int err = Nbd().get_errno() ? Nbd().get_errno() : EIO;
    throw std::system_error(
        err, std::generic_category(),
        fmt::format("--uri: '{}': reading the first MiB: {}", uri, NbdError(err)));
  }
  RunUntil(
      h, [&result] { return result.done; }, limits, uri, "reading the first MiB of",
      "reading the first MiB of");
  if (result.error != 0) {
    throw std::system_error(result.error, std::generic_category(),
                            fmt::format("--uri: '{}': reading the first MiB", uri));
  }
}

}  // namespace

nbd_handle* ConnectNbd(const std::string& uri, const NbdLimits& limits) {
  nbd_handle* h = Nbd().create();
  if (h == nullptr) {
    throw std::system_error(Nbd().get_errno() ? Nbd().get_errno() : ENOMEM, std::generic_category(),
                            fmt::format("nbd: cannot create a handle: {}", Nbd().get_error()));
  }
  Nbd().set_pread_initialize(h, false);
  try {
    if (Nbd().aio_connect_uri(h, uri.c_str()) == -1) {
      const int err = Nbd().get_errno() ? Nbd().get_errno() : ECONNREFUSED;
      const std::string why = NbdError(err);
      if (err == EINVAL) {  // a malformed URI: the user's to fix (exit 2)
        throw stats::UsageError(fmt::format("--uri: '{}' is not an NBD URI: {}", uri, why));
      }
      throw std::system_error(err, std::generic_category(),
                              fmt::format("--uri: cannot connect to '{}': {}", uri, why));
    }
    RunUntil(
        h, [h] { return !Nbd().aio_is_connecting(h); }, limits, uri, "connecting to",
        "cannot connect to");
    if (Nbd().aio_is_ready(h) != 1) {
      throw std::system_error(ECONNABORTED, std::generic_category(),
                              fmt::format("--uri: cannot connect to '{}': the handshake failed: {}",
                                          uri, Nbd().get_error() ? Nbd().get_error() : "?"));
    }
  } catch (...) {
    Nbd().close(h);
    throw;
  }
  return h;
}

NbdExport ProbeNbdExport(const JobSpec& spec, const std::atomic<bool>* stop) {
  const NbdLimits limits{spec.nbd.timeout_ns, stop};
  nbd_handle* h = ConnectNbd(spec.uri, limits);
  struct Closer {
    nbd_handle* h;
    ~Closer() {
      Nbd().shutdown(h, 0);
      Nbd().close(h);
    }
  } closer{h};
  NbdExport e;
  const int64_t size = Nbd().get_size(h);
  // libnbd (1.14) hands the size of a ready handle back as it is: one over 2^63-1 turns negative,
  // with no error set.
  if (size < -1 || (size == -1 && Nbd().get_error() == nullptr)) {
    throw std::system_error(
        EOVERFLOW, std::generic_category(),
        fmt::format("--uri: '{}': {}", spec.uri, ExportTooLarge(static_cast<uint64_t>(size))));
  }
  if (size < 0) {
    const int err = Nbd().get_errno() ? Nbd().get_errno() : EIO;
    throw std::system_error(err, std::generic_category(),
                            fmt::format("--uri: '{}': export size: {}", spec.uri, NbdError(err)));
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
    for (const BlockSizeShare& s : spec.blocks.bssplit) check(s.bs);
    for (const BlockSizeShare& s : spec.blocks.bssplit_w) check(s.bs);
    if (spec.region.offset % e.min_block != 0) {
      throw stats::UsageError(
          fmt::format("--offset: the NBD server needs a multiple of {} bytes", e.min_block));
    }
  }
  if (e.max_block != 0 && spec.MaxBlockSize() > e.max_block) {
    throw stats::UsageError(fmt::format(
        "--bs: the NBD server at '{}' takes at most {} bytes per request", spec.uri, e.max_block));
  }
  // A block larger than the export (or what --offset leaves of it); --size, and an --offset past
  // the end, are checked by the caller with the region.
  const uint64_t room = e.size > spec.region.offset ? e.size - spec.region.offset : 0;
  if (room != 0 && spec.region.size == 0 && spec.region.size_percent == 0 &&
      spec.region.offset_percent == 0 && spec.MaxBlockSize() > room) {
    throw stats::UsageError(fmt::format(
        "--bs: a block of {} bytes does not fit in the export at '{}', which has {} bytes{}",
        spec.MaxBlockSize(), spec.uri, e.size,
        spec.region.offset != 0 ? fmt::format(" ({} after --offset)", room) : ""));
  }
  if (spec.nbd.conns > 1 && !e.multi_conn && spec.HasWrites()) {
    throw stats::UsageError(fmt::format(
        "--nbd_conns={}: the server at '{}' does not advertise multi-conn, so writes over several "
        "connections are not guaranteed to be seen by the others; use --nbd_conns=1 (reads only "
        "may use more)",
        spec.nbd.conns, spec.uri));
  }
  if (spec.HasWrites()) {
    if (e.read_only) {
      throw stats::UsageError(
          fmt::format("--rw={}: the export at '{}' is read-only", RwModeName(spec.rw), spec.uri));
    }
    if (!spec.allow_destructive) {
      const size_t head = static_cast<size_t>(std::min<uint64_t>(e.size, 1 << 20));
      std::vector<unsigned char> buf(head);
      if (head > 0) ReadHead(h, buf.data(), head, limits, spec.uri);
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

nbd_handle* ConnectNbd(const std::string&, const NbdLimits&) {
  throw stats::UsageError("--ioengine: nbd is not built in (iotail was built without libnbd)");
}
NbdExport ProbeNbdExport(const JobSpec&, const std::atomic<bool>*) {
  throw stats::UsageError("--ioengine: nbd is not built in (iotail was built without libnbd)");
}

#endif

}  // namespace iotail::engine
