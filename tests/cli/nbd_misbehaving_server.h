// A misbehaving NBD server for the nbd engine's tests: a thread of the test process serving one
// export on a Unix socket in a fresh temporary directory, speaking the fixed-newstyle handshake
// and simple replies only (every other option, structured replies and extended headers included,
// is answered NBD_REP_ERR_UNSUP, so libnbd falls back to simple replies too), with its own encoding
// (not engine/io/nbd_wire.h's, which is under test). Reads return zeroes,
// writes are taken and dropped. Connections are served one after the other, in the order they
// come (the run's probe first, then the engine's). What it does wrong is set by Behaviour:
// - kSlowDrip: after `good_replies` replies on a connection, every byte of a reply is sent alone,
//   one every 50 ms (a slowloris server);
// - kDuplicateHandle: after `good_replies` replies, the next reply is sent twice in one write;
// - kUnknownHandle: after `good_replies` replies, one reply carries a handle never sent;
// - kBatchThenDuplicate: waits for `good_replies` requests, then answers them all in one write
//   followed by a second reply to the first of them (a protocol error after good replies, all in
//   what one recv() brings);
// and by the export: `export_size` (any 64-bit value, 2^63 and above included), and
// `refuse_connection`: that connection's (0-based) NBD_OPT_GO is refused with
// NBD_REP_ERR_POLICY and `refusal_text` as the message (control bytes and all).
// Use from a test (one owner; the destructor stops the thread and removes the directory):
//   MisbehavingNbdServer server({.behaviour = MisbehavingNbdServer::kSlowDrip});
//   ASSERT_EQ(server.Start(), "");
//   ... iotail run --ioengine=nbd --uri='server.uri()' ...
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "nbd_fixture.h"

namespace iotail::testing {

class MisbehavingNbdServer {
 public:
  enum Behaviour { kNone, kSlowDrip, kDuplicateHandle, kUnknownHandle, kBatchThenDuplicate };
  struct Config {
    Behaviour behaviour = kNone;
    uint32_t good_replies = 20;
    uint64_t export_size = 64ull << 20;
    int refuse_connection = -1;
    std::string refusal_text;
  };

  explicit MisbehavingNbdServer(Config config) : config_(std::move(config)) {}
  ~MisbehavingNbdServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
    RemoveTree(dir_);
  }
  MisbehavingNbdServer(const MisbehavingNbdServer&) = delete;
  MisbehavingNbdServer& operator=(const MisbehavingNbdServer&) = delete;

  // Listens and starts serving: "" or why not.
  std::string Start() {
    dir_ = MakeShortTempDir();
    if (dir_.empty()) return std::string("mkdtemp: ") + std::strerror(errno);
    socket_ = (dir_ / "sock").string();
    fd_ = BindUnixSocket(socket_);
    if (fd_ < 0 || ::listen(fd_, 16) != 0) return std::string("listen: ") + std::strerror(errno);
    thread_ = std::thread([this] { Serve(); });
    return {};
  }

  // nbd+unix:///?socket=DIR/sock (quote it for the shell).
  std::string uri() const { return "nbd+unix:///?socket=" + socket_; }
  // Connections accepted so far, and read requests answered (in full or in part) on all of them.
  int connections() const { return connections_.load(); }
  uint32_t replies() const { return replies_.load(); }

 private:
  static constexpr uint64_t kOptMagic = 0x49484156454F5054;
  static constexpr uint64_t kReplyMagic = 0x0003e889045565a9;

  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) != 1) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      const int index = connections_++;
      if (Handshake(c, index)) Transmit(c);
      ::close(c);
    }
  }

  // Exactly `len` bytes, or false (EOF, an error, or the server stopping).
  bool Read(int c, void* buf, size_t len) {
    auto* p = static_cast<char*>(buf);
    while (len > 0) {
      pollfd pf{c, POLLIN, 0};
      if (stop_) return false;
      if (::poll(&pf, 1, 20) == 0) continue;
      const ssize_t n = ::recv(c, p, len, 0);
      if (n <= 0) return false;
      p += n;
      len -= static_cast<size_t>(n);
    }
    return true;
  }
  bool Write(int c, const void* buf, size_t len) {
    auto* p = static_cast<const char*>(buf);
    while (len > 0) {
      if (stop_) return false;
      const ssize_t n = ::send(c, p, len, MSG_NOSIGNAL);
      if (n <= 0) return false;
      p += n;
      len -= static_cast<size_t>(n);
    }
    return true;
  }
  static void Put(std::vector<unsigned char>& out, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
  }
  static uint64_t Get(const unsigned char* p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
    return v;
  }
  bool OptionReply(int c, uint32_t opt, uint32_t type, const std::string& data) {
    std::vector<unsigned char> r;
    Put(r, kReplyMagic, 8);
    Put(r, opt, 4);
    Put(r, type, 4);
    Put(r, data.size(), 4);
    r.insert(r.end(), data.begin(), data.end());
    return Write(c, r.data(), r.size());
  }

  // Greeting and options up to NBD_OPT_GO's ACK: true when in the transmission phase.
  bool Handshake(int c, int index) {
    std::vector<unsigned char> g;
    Put(g, 0x4e42444d41474943, 8);  // NBDMAGIC
    Put(g, kOptMagic, 8);
    Put(g, 3, 2);  // fixed newstyle, no zeroes
    unsigned char flags[4];
    if (!Write(c, g.data(), g.size()) || !Read(c, flags, 4)) return false;
    for (;;) {
      unsigned char head[16];
      if (!Read(c, head, 16) || Get(head, 8) != kOptMagic) return false;
      const auto opt = static_cast<uint32_t>(Get(head + 8, 4));
      const auto len = static_cast<uint32_t>(Get(head + 12, 4));
      if (len > 4096) return false;
      std::vector<unsigned char> data(len);
      if (len > 0 && !Read(c, data.data(), len)) return false;
      if (opt == 2) return false;  // NBD_OPT_ABORT
      if (opt != 7 && opt != 6) {  // only NBD_OPT_GO and NBD_OPT_INFO are served
        if (!OptionReply(c, opt, 0x80000001, "")) return false;
        continue;
      }
      if (index == config_.refuse_connection) {
        if (!OptionReply(c, opt, 0x80000002, config_.refusal_text)) return false;
        continue;
      }
      std::vector<unsigned char> info;
      Put(info, 0, 2);  // NBD_INFO_EXPORT
      Put(info, config_.export_size, 8);
      Put(info, 1 | 4, 2);  // HAS_FLAGS | SEND_FLUSH
      if (!OptionReply(c, opt, 3, std::string(info.begin(), info.end())) ||
          !OptionReply(c, opt, 1, "")) {
        return false;
      }
      if (opt == 7) return true;
    }
  }

  // One simple reply (and a read's zeroes) appended to `out`.
  static void AppendReply(std::vector<unsigned char>& out, uint64_t handle, uint32_t data_len) {
    Put(out, 0x67446698, 4);
    Put(out, 0, 4);
    Put(out, handle, 8);
    out.insert(out.end(), data_len, 0);
  }

  // Slowly: one byte every 50 ms.
  bool Drip(int c, const std::vector<unsigned char>& bytes) {
    for (unsigned char b : bytes) {
      for (int i = 0; i < 5; ++i) {
        if (stop_) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (!Write(c, &b, 1)) return false;
    }
    return true;
  }

  void Transmit(int c) {
    uint32_t answered = 0;
    std::vector<unsigned char> batch;  // kBatchThenDuplicate's replies so far
    uint64_t first_handle = 0;
    uint32_t first_len = 0;
    for (;;) {
      unsigned char req[28];
      if (!Read(c, req, sizeof req) || Get(req, 4) != 0x25609513) return;
      const auto type = static_cast<uint16_t>(Get(req + 6, 2));
      const uint64_t handle = Get(req + 8, 8);
      const auto len = static_cast<uint32_t>(Get(req + 24, 4));
      if (type == 2) return;  // NBD_CMD_DISC
      if (type == 1) {        // a write: its data taken and dropped
        std::vector<unsigned char> sink(len);
        if (len > 0 && !Read(c, sink.data(), len)) return;
      }
      const uint32_t data_len = type == 0 ? len : 0;
      std::vector<unsigned char> reply;
      AppendReply(reply, handle, data_len);
      ++replies_;
      const bool misbehave = answered++ >= config_.good_replies;
      switch (misbehave ? config_.behaviour : kNone) {
        case kSlowDrip:
          if (!Drip(c, reply)) return;
          continue;
        case kDuplicateHandle:
          AppendReply(reply, handle, data_len);
          break;
        case kUnknownHandle:
          reply.clear();
          AppendReply(reply, 0x0123456789abcdef, 0);
          break;
        default:
          break;
      }
      if (config_.behaviour == kBatchThenDuplicate) {
        if (batch.empty()) std::tie(first_handle, first_len) = std::pair(handle, data_len);
        batch.insert(batch.end(), reply.begin(), reply.end());
        if (answered < config_.good_replies) continue;
        AppendReply(batch, first_handle, first_len);
        if (!Write(c, batch.data(), batch.size())) return;
        batch.clear();
        answered = 0;
        continue;
      }
      if (!Write(c, reply.data(), reply.size())) return;
    }
  }

  Config config_;
  std::filesystem::path dir_;
  std::string socket_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<uint32_t> replies_{0};
  std::thread thread_;
};

}  // namespace iotail::testing
