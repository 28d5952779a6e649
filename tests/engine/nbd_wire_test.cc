// The direct nbd path's bytes (engine/io/nbd_wire.h) and the URIs it serves
// (engine/io/nbd_handshake.h): request headers as the protocol lays them out, replies parsed from
// whatever pieces recv() returns, protocol errors caught, and only plain URIs taken.
#include "engine/io/nbd_wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/io/nbd_handshake.h"

namespace nbd_wire_test {

namespace wire = iotail::engine::nbd_wire;
using iotail::engine::ParsePlainNbdUri;

// Slot i reads into bufs[i] (len 8) when i is even, writes when odd.
struct FakeSink {
  std::vector<std::vector<char>> bufs = std::vector<std::vector<char>>(4, std::vector<char>(8));
  std::vector<std::pair<uint64_t, uint32_t>> done;
  bool Expect(uint64_t handle, char** data, uint32_t* len) {
    if (handle >= bufs.size()) return false;
    *data = bufs[handle].data();
    *len = handle % 2 == 0 ? 8 : 0;
    return true;
  }
  void Complete(uint64_t handle, uint32_t error) { done.emplace_back(handle, error); }
};

std::vector<char> Reply(uint64_t handle, uint32_t error, const std::string& data = "") {
  unsigned char head[wire::kSimpleReplySize];
  wire::Put32(head, wire::kSimpleReplyMagic);
  wire::Put32(head + 4, error);
  wire::Put64(head + 8, handle);
  std::string r(reinterpret_cast<const char*>(head), sizeof head);
  r += data;
  return std::vector<char>(r.begin(), r.end());
}

TEST(NbdWireTest, RequestHeaderIsTheProtocolsBigEndianLayout) {
  unsigned char h[wire::kRequestSize];
  wire::EncodeRequest(h, wire::kCmdWrite, 0x0102030405060708, 0x1122334455667788, 4096);
  const unsigned char want[wire::kRequestSize] = {
      0x25, 0x60, 0x95, 0x13, 0,    0,    0,    1,    1,    2,    3, 4, 5,    6,
      7,    8,    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0, 0, 0x10, 0};
  EXPECT_EQ(std::memcmp(h, want, sizeof want), 0);
}

TEST(NbdWireTest, RepliesSplitAnywhereAreParsedWhole) {
  std::vector<char> stream;
  for (const auto& r : {Reply(0, 0, "abcdefgh"), Reply(1, 0), Reply(2, 5), Reply(3, 28)}) {
    stream.insert(stream.end(), r.begin(), r.end());
  }
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    FakeSink sink;
    wire::NbdReplyParser parser;
    for (size_t at = 0; at < stream.size(); at += piece) {
      ASSERT_TRUE(parser.Feed(stream.data() + at, std::min(piece, stream.size() - at), sink));
    }
    ASSERT_EQ(sink.done.size(), 4u) << "pieces of " << piece;
    EXPECT_EQ(std::string(sink.bufs[0].data(), 8), "abcdefgh");
    EXPECT_EQ(sink.done[0], (std::pair<uint64_t, uint32_t>{0, 0}));
    EXPECT_EQ(sink.done[1], (std::pair<uint64_t, uint32_t>{1, 0}));
    EXPECT_EQ(sink.done[2], (std::pair<uint64_t, uint32_t>{2, 5}));  // an error: no data follows
    EXPECT_EQ(sink.done[3], (std::pair<uint64_t, uint32_t>{3, 28}));
  }
}

TEST(NbdWireTest, DataReceivedInPlaceCompletesTheRead) {
  FakeSink sink;
  wire::NbdReplyParser parser;
  const auto r = Reply(2, 0, "wxyz");
  ASSERT_TRUE(parser.Feed(r.data(), r.size(), sink));
  ASSERT_EQ(parser.DataLeft(), 4u);
  std::memcpy(parser.DataDestination(), "WXYZ", 4);
  parser.Advance(4, sink);
  ASSERT_EQ(sink.done.size(), 1u);
  EXPECT_EQ(std::string(sink.bufs[2].data(), 8), std::string("wxyzWXYZ"));
}

TEST(NbdWireTest, WrongMagicOrUnknownHandleIsAProtocolError) {
  FakeSink sink;
  wire::NbdReplyParser bad_magic;
  auto r = Reply(1, 0);
  r[0] = 0;
  EXPECT_FALSE(bad_magic.Feed(r.data(), r.size(), sink));
  EXPECT_EQ(bad_magic.violation(), wire::NbdReplyParser::Violation::kBadMagic);
  EXPECT_EQ(bad_magic.magic(), 0x00446698u);
  wire::NbdReplyParser bad_handle;
  r = Reply(9, 0);
  EXPECT_FALSE(bad_handle.Feed(r.data(), r.size(), sink));
  EXPECT_EQ(bad_handle.violation(), wire::NbdReplyParser::Violation::kUnexpectedHandle);
  EXPECT_EQ(bad_handle.handle(), 9u);
  EXPECT_TRUE(sink.done.empty());
}

TEST(NbdWireTest, RepliesBeforeAProtocolErrorInOneFeedAreCompleted) {
  FakeSink sink;
  wire::NbdReplyParser parser;
  std::vector<char> stream;
  for (const auto& r : {Reply(1, 0), Reply(0, 0, "abcdefgh"), Reply(3, 0), Reply(7, 0)}) {
    stream.insert(stream.end(), r.begin(), r.end());
  }
  EXPECT_FALSE(parser.Feed(stream.data(), stream.size(), sink));
  ASSERT_EQ(sink.done.size(), 3u);
  EXPECT_EQ(parser.violation(), wire::NbdReplyParser::Violation::kUnexpectedHandle);
  EXPECT_EQ(parser.handle(), 7u);
}

TEST(NbdWireTest, ErrorsMapAsLibnbdMapsThem) {
  EXPECT_EQ(wire::ErrnoOfNbdError(5), EIO);
  EXPECT_EQ(wire::ErrnoOfNbdError(28), ENOSPC);
  EXPECT_EQ(wire::ErrnoOfNbdError(108), ESHUTDOWN);
  EXPECT_EQ(wire::ErrnoOfNbdError(1234), EINVAL);
}

TEST(NbdHandshakeTest, OnlyPlainUrisAreServedDirectly) {
  auto u = ParsePlainNbdUri("nbd+unix:///disk?socket=/tmp/s");
  EXPECT_EQ(u.why_not, "");
  EXPECT_EQ(u.socket_path, "/tmp/s");
  EXPECT_EQ(u.export_name, "disk");
  u = ParsePlainNbdUri("nbd+unix:///?socket=/tmp/s");
  EXPECT_EQ(u.export_name, "");
  u = ParsePlainNbdUri("nbd://example.com:10810/x");
  EXPECT_EQ(u.why_not, "");
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, "10810");
  EXPECT_EQ(u.export_name, "x");
  EXPECT_EQ(ParsePlainNbdUri("nbd://localhost").port, "10809");
  for (const char* other :
       {"nbds://localhost/", "nbd+unix:///?socket=/s&tls=require", "nbd://[::1]/", "nbd://u@h/",
        "nbd://h/a%20b", "nbd+vsock:///", "nbd+unix:///", "nbd://h/?tls-certificates=/x"}) {
    EXPECT_NE(ParsePlainNbdUri(other).why_not, "") << other;
  }
}

}  // namespace nbd_wire_test
