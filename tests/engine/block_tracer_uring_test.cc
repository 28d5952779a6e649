// BlockTracer's io_uring events: reads submitted through liburing with known user_data come back
// as one submission and one completion each, carrying that user_data, on one ring; another
// process's io_uring reads on the same device (a forked child) are never among them, while its
// block requests are (the block programs filter by device, the io_uring ones by process).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <map>
#include <set>

#include "engine/explain/block_tracer.h"
#include "tests/engine/explain_fixture.h"

#if IOTAIL_TEST_HAVE_LIBURING
#include <liburing.h>
#endif

namespace iotail::testing {
namespace block_tracer_uring_test {

#if IOTAIL_TEST_HAVE_LIBURING
// Reads 4 KiB at each of `offsets` of `path` (O_DIRECT) through one ring, all in flight at once,
// user_data = first_user_data + i. Returns how many completed with 4096 bytes, or -errno.
int UringReads(const std::string& path, const std::vector<uint64_t>& offsets,
               uint64_t first_user_data) {
  io_uring ring;
  if (int r = io_uring_queue_init(64, &ring, 0); r < 0) return r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  void* buffers = nullptr;
  if (fd < 0 || ::posix_memalign(&buffers, 4096, 4096 * offsets.size()) != 0) return -EIO;
  for (size_t i = 0; i < offsets.size(); ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_read(sqe, fd, static_cast<char*>(buffers) + 4096 * i, 4096, offsets[i]);
    io_uring_sqe_set_data64(sqe, first_user_data + i);
  }
  int good = io_uring_submit(&ring) == static_cast<int>(offsets.size()) ? 0 : -EIO;
  for (size_t i = 0; good >= 0 && i < offsets.size(); ++i) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_wait_cqe(&ring, &cqe) != 0) return -EIO;
    good += cqe->res == 4096 ? 1 : 0;
    io_uring_cqe_seen(&ring, cqe);
  }
  io_uring_queue_exit(&ring);
  ::close(fd);
  std::free(buffers);
  return good;
}
#endif

TEST(BlockTracerTest, IoUringEventsCarryUserDataOfThisProcessOnly) {
#if !IOTAIL_TEST_HAVE_LIBURING
  GTEST_SKIP() << "engine_tests built without liburing";
#else
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(16 << 20); !why.empty()) GTEST_SKIP() << why;
  const dev_t dev = loop.rdev();
  std::unique_ptr<engine::BlockTracer> tracer;
  IOTAIL_OPEN_TRACER_OR_SKIP(tracer, std::span(&dev, 1), ::getpid());

  constexpr uint64_t kOurs = 0x10000, kTheirs = 0xdead0000;
  const std::vector<uint64_t> offsets = {0,       6 << 20, 65536,   1 << 20,
                                         2 << 20, 3 << 20, 4 << 20, 15 << 20};
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int good = UringReads(loop.path(), {8192, 16384, 32768, 5 << 20}, kTheirs);
    ::_exit(good == 4 ? 0 : 1);
  }
  const uint64_t before = MonotonicNs();
  EXPECT_EQ(UringReads(loop.path(), offsets, kOurs), static_cast<int>(offsets.size()));
  const uint64_t after = MonotonicNs();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's reads failed";

  Collector seen;
  PollUntil(*tracer, seen, [&] { return seen.uring.size() >= 2 * offsets.size(); });
  std::map<uint64_t, engine::IoUringEvent> submits, completes;
  for (const engine::IoUringEvent& e : seen.uring) {
    EXPECT_GE(e.user_data, kOurs);
    EXPECT_LT(e.user_data, kOurs + offsets.size()) << "not this process's: " << e.user_data;
    EXPECT_LE(before, e.time_ns);
    EXPECT_LE(e.time_ns, after);
    auto& side = e.kind == engine::IoUringEvent::Kind::kSubmit ? submits : completes;
    EXPECT_TRUE(side.emplace(e.user_data, e).second) << "twice: " << e.user_data;
  }
  ASSERT_EQ(submits.size(), offsets.size());
  ASSERT_EQ(completes.size(), offsets.size());
  const uint64_t ring = submits.begin()->second.ring;
  for (const auto& [user_data, submit] : submits) {
    const engine::IoUringEvent& complete = completes.at(user_data);
    EXPECT_EQ(submit.opcode, IORING_OP_READ);
    EXPECT_EQ(submit.ring, ring);
    EXPECT_EQ(complete.ring, ring);
    EXPECT_EQ(complete.res, 4096);
    EXPECT_LE(submit.time_ns, complete.time_ns);
  }
  // Both processes' requests on the device: 8 + 4, none adjacent (adjacent reads submitted
  // together may be merged into one request by the block layer), each in the request table.
  EXPECT_EQ(tracer->Counters().block_records, offsets.size() + 4);
  std::set<uint64_t> sectors = {8192 / 512, 16384 / 512, 32768 / 512, (5 << 20) / 512};
  for (const uint64_t offset : offsets) sectors.insert(offset / 512);
  for (const uint64_t sector : sectors) {
    const auto request = tracer->Requests().Find(loop.rdev(), sector);
    ASSERT_TRUE(request.has_value()) << "at sector " << sector;
    EXPECT_EQ(request->nr_sector, 8u) << "at sector " << sector;
  }
  EXPECT_EQ(tracer->Counters().uring_dropped, 0u);
#endif
}

}  // namespace block_tracer_uring_test
}  // namespace iotail::testing
