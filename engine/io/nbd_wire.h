// The NBD protocol's transmission phase as iotail's direct nbd path speaks it (engine/io/
// engine_nbd_direct.cc): simple requests and simple replies only (no structured replies, no
// extended headers: the direct handshake, engine/io/nbd_handshake.h, never asks for them, so a
// server must not send them). Pure functions and a byte-stream parser, no system calls: the engine
// owns the sockets, this file owns the bytes.
//
// EncodeRequest() writes the 28-byte request header (big-endian: magic 0x25609513, flags, type,
// handle, offset, length). NbdReplyParser takes the bytes received on one connection, in whatever
// pieces recv() returned them, and turns them into completions: the 16-byte simple reply header
// (magic 0x67446698, error, handle) and, for a successful read, the read's data, copied straight
// into the request's buffer. It asks its sink what a handle is (Expect), tells it when a reply is
// whole (Complete) and stops at the first byte that breaks the protocol (a wrong magic, a handle
// not in flight): the connection is then unusable, and violation(), magic() and handle() say what
// broke it. No allocation, no throw; one parser per connection, used by one thread.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace iotail::engine::nbd_wire {

inline constexpr uint32_t kRequestMagic = 0x25609513;
inline constexpr uint32_t kSimpleReplyMagic = 0x67446698;
inline constexpr size_t kRequestSize = 28;
inline constexpr size_t kSimpleReplySize = 16;
inline constexpr uint16_t kCmdRead = 0;
inline constexpr uint16_t kCmdWrite = 1;
inline constexpr uint16_t kCmdDisconnect = 2;

inline void Put16(unsigned char* p, uint16_t v) {
  p[0] = static_cast<unsigned char>(v >> 8);
  p[1] = static_cast<unsigned char>(v);
}
inline void Put32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (24 - 8 * i));
}
inline void Put64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (56 - 8 * i));
}
inline uint16_t Get16(const unsigned char* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t Get32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint64_t Get64(const unsigned char* p) { return uint64_t{Get32(p)} << 32 | Get32(p + 4); }

inline void EncodeRequest(unsigned char* out, uint16_t type, uint64_t handle, uint64_t offset,
                          uint32_t length) {
  Put32(out, kRequestMagic);
  Put16(out + 4, 0);  // command flags: none
  Put16(out + 6, type);
  Put64(out + 8, handle);
  Put64(out + 16, offset);
  Put32(out + 24, length);
}

// The host errno of an NBD error value, as libnbd maps them: the protocol's values are Linux's
// for the errors it names; anything else is EINVAL.
inline int ErrnoOfNbdError(uint32_t e) {
  switch (e) {
    case 1:    // NBD_EPERM
    case 5:    // NBD_EIO
    case 12:   // NBD_ENOMEM
    case 22:   // NBD_EINVAL
    case 28:   // NBD_ENOSPC
    case 75:   // NBD_EOVERFLOW
    case 95:   // NBD_ENOTSUP
    case 108:  // NBD_ESHUTDOWN
      return static_cast<int>(e);
    default:
      return EINVAL;
  }
}

// Sink: what the engine tells the parser of its requests, and what it hears back.
//   bool Expect(uint64_t handle, char** data, uint32_t* len): false if `handle` is not in flight
//     on this connection; else *data and *len are where a successful read's data goes (a write:
//     *len = 0).
//   void Complete(uint64_t handle, uint32_t nbd_error): the reply is whole (data included).
class NbdReplyParser {
 public:
  enum class Violation { kNone, kBadMagic, kUnexpectedHandle };

  // Consumes all `n` bytes; false at the first protocol error (the rest is not looked at).
  template <class Sink>
  bool Feed(const char* p, size_t n, Sink& sink) {
    while (n > 0) {
      if (data_left_ > 0) {
        const size_t take = n < data_left_ ? n : data_left_;
        std::memcpy(data_, p, take);
        Advance(take, sink);
        p += take;
        n -= take;
        continue;
      }
      const size_t take = n < kSimpleReplySize - have_ ? n : kSimpleReplySize - have_;
      std::memcpy(header_ + have_, p, take);
      have_ += take;
      p += take;
      n -= take;
      if (have_ < kSimpleReplySize) break;
      have_ = 0;
      magic_ = Get32(header_);
      if (magic_ != kSimpleReplyMagic) {
        violation_ = Violation::kBadMagic;
        return false;
      }
      error_ = Get32(header_ + 4);
      handle_ = Get64(header_ + 8);
      uint32_t len = 0;
      if (!sink.Expect(handle_, &data_, &len)) {
        violation_ = Violation::kUnexpectedHandle;
        return false;
      }
      if (error_ != 0 || len == 0) {
        sink.Complete(handle_, error_);
      } else {
        data_left_ = len;
      }
    }
    return true;
  }

  // While a read's data is arriving: where its next byte goes and how many are left (the engine
  // may recv() a large remainder straight there, then call Advance with what it got).
  char* DataDestination() const { return data_; }
  size_t DataLeft() const { return data_left_; }
  template <class Sink>
  void Advance(size_t n, Sink& sink) {
    data_ += n;
    data_left_ -= n;
    if (data_left_ == 0) sink.Complete(handle_, 0);
  }

  // After Feed() returned false: what broke the protocol, the reply's magic and its handle (of a
  // kUnexpectedHandle).
  Violation violation() const { return violation_; }
  uint32_t magic() const { return magic_; }
  uint64_t handle() const { return handle_; }

 private:
  unsigned char header_[kSimpleReplySize] = {};
  size_t have_ = 0;  // header bytes gathered
  uint32_t magic_ = 0;
  uint32_t error_ = 0;
  uint64_t handle_ = 0;
  Violation violation_ = Violation::kNone;
  char* data_ = nullptr;  // where the current read's next byte goes
  size_t data_left_ = 0;
};

}  // namespace iotail::engine::nbd_wire
