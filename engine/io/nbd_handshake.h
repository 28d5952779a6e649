// The direct nbd path's own connection: for a plain URI, iotail connects and negotiates the NBD
// fixed-newstyle handshake itself, so that the transmission phase afterwards is iotail's alone
// (libnbd's nbd_aio_get_fd documents that its socket may be used for nothing but polling, so a
// libnbd connection cannot be taken over safely). Everything this does not serve stays libnbd's:
// the caller (engine/io/engine_nbd.cc) falls back to it.
//
// ConnectNbdDirect() takes exactly two URI forms, without percent-escapes, user info, IPv6
// literals or any query but socket=:
//   nbd+unix:///EXPORT?socket=PATH    nbd://HOST[:PORT][/EXPORT]   (PORT 10809 by default)
// It connects (non-blocking, the socket polled in 50 ms slices), reads the server's greeting,
// asks for fixed newstyle (and no zeroes when offered), and sends NBD_OPT_GO for EXPORT with no
// information requests, never NBD_OPT_STRUCTURED_REPLY nor extended headers, so the server
// answers every request with a simple reply. On success `fd` is the connected socket, in the
// transmission phase, non-blocking, close-on-exec, owned by the caller. When the direct path
// cannot serve (another URI form, an old-style server or one without fixed newstyle, a server that
// requires TLS or does not know NBD_OPT_GO), `fd` is -1 and `why_not` says why, for the caller to
// fall back or report. A refusal's message from the server is shown printable (stats/util/
// printable_text.h: control bytes as \xNN); an export over 2^63-1 bytes is refused (EOVERFLOW,
// ExportTooLarge). Failures are thrown as ConnectNbd's (engine/nbd_target.h): a refused
// connection or a refused export a std::system_error naming the URI, the --nbd_timeout deadline a
// std::system_error(ETIMEDOUT) naming it, a set *limits.stop a stats::Interrupted. Only a host
// name's lookup (getaddrinfo) blocks. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>

#include "engine/nbd_target.h"

namespace iotail::engine {

struct DirectNbdConnection {
  int fd = -1;
  std::string why_not;  // set when fd is -1
  uint64_t size = 0;
  uint16_t transmission_flags = 0;
};

DirectNbdConnection ConnectNbdDirect(const std::string& uri, const NbdLimits& limits);

// Why an export of `size` bytes (over 2^63-1) cannot be served, naming the size: for both paths'
// checks of the export's size.
std::string ExportTooLarge(uint64_t size);

// The parts of a URI ConnectNbdDirect serves; `why_not` set (and the rest empty) for any other.
struct PlainNbdUri {
  std::string socket_path;  // nbd+unix: the socket; empty for nbd://
  std::string host;
  std::string port;
  std::string export_name;
  std::string why_not;
};
PlainNbdUri ParsePlainNbdUri(const std::string& uri);

}  // namespace iotail::engine
