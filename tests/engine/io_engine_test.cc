// The I/O engines on a temporary file: each engine built in reads what the file holds at the
// offsets asked and writes where it is asked, stamps as io_engine.h says, and the engines that move
// a file position (sync, vsync) keep one of their own, as fio's clones do. And the engine names:
// fio's, parsed; fio's others and its NAME:... forms, refused by name.
#include "engine/io/io_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "stats/core/errors.h"
#include "tests/test_util.h"

namespace iotail::engine {
namespace io_engine_test {

namespace fs = std::filesystem;

constexpr uint32_t kBlock = 4096;
constexpr uint32_t kBlocks = 64;
constexpr uint32_t kDepth = 4;

// The test file's byte at `offset`; `salt` tells the engines' writes from the original content.
char PatternByte(uint64_t offset, unsigned salt) {
  return static_cast<char>((offset * 131 + offset / kBlock * 7 + salt * 29) & 0xff);
}

class IoEngineTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override {
    dir_ = testing::MakeScratchDir("iotail_io_engine");
    const fs::path path = dir_ / "target";
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd_, 0);
    std::vector<char> data(kBlocks * kBlock);
    for (size_t i = 0; i < data.size(); ++i) data[i] = PatternByte(i, 0);
    ASSERT_EQ(pwrite(fd_, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
    buffers_ = static_cast<char*>(std::aligned_alloc(kBlock, kDepth * kBlock));
    other_buffers_ = static_cast<char*>(std::aligned_alloc(kBlock, kDepth * kBlock));
  }
  void TearDown() override {
    engines_.clear();
    std::free(buffers_);
    std::free(other_buffers_);
    if (fd_ >= 0) close(fd_);
    fs::remove_all(dir_);
  }

  // A prepared engine of the kind under test over the file (ENGINE_OR_SKIP first checks that it
  // can run here). Every engine made shares the file's one descriptor, as a job's clones do.
  // Its slots' buffers are `buffers` (default the fixture's), kDepth blocks.
  IoEngine* Engine(char* buffers = nullptr) {
    EngineSetup setup;
    setup.fds = {fd_};
    setup.depth = kDepth;
    setup.buffers = buffers != nullptr ? buffers : buffers_;
    setup.buffer_size = kBlock;
    engines_.push_back(ConstructEngine(GetParam()));
    engines_.back()->Prepare(setup);
    return engines_.back().get();
  }

  // Runs one request per block of `blocks` (at most kDepth) through `engine`, slot i with buffer
  // `buffer` + i * kBlock (the engine's own buffers: io_uring registers them), and returns each
  // slot's completion.
  std::vector<IoCompletion> Run(IoEngine& engine, stats::Direction dir,
                                const std::vector<uint32_t>& blocks, char* buffer) {
    std::vector<IoStamps> stamps(blocks.size());
    std::vector<IoRequest> requests;
    for (uint32_t i = 0; i < blocks.size(); ++i) {
      requests.push_back(IoRequest{i, dir, 0, uint64_t{blocks[i]} * kBlock, kBlock,
                                   buffer + static_cast<size_t>(i) * kBlock, &stamps[i]});
    }
    EXPECT_EQ(engine.Submit(requests), static_cast<int>(requests.size()));
    std::vector<IoCompletion> by_slot(blocks.size(), IoCompletion{UINT32_MAX, 0, 0});
    std::vector<IoCompletion> out(kDepth);
    for (size_t seen = 0; seen < blocks.size();) {
      const int n = engine.Reap(out, 1);
      EXPECT_GT(n, 0);
      if (n <= 0) break;
      for (int k = 0; k < n; ++k) {
        const IoCompletion& c = out[static_cast<size_t>(k)];
        EXPECT_LT(c.slot, blocks.size());
        if (c.slot >= blocks.size()) return by_slot;
        by_slot[c.slot] = c;
        // The stamps' order (io_engine.h); synchronous engines have no separate submission.
        EXPECT_LE(stamps[c.slot].start_ns, stamps[c.slot].issued_ns);
        EXPECT_LE(stamps[c.slot].issued_ns, c.done_ns);
        if (!engine.Asynchronous()) {
          EXPECT_EQ(stamps[c.slot].start_ns, stamps[c.slot].issued_ns);
        }
      }
      seen += static_cast<size_t>(n);
    }
    return by_slot;
  }

  // Whether `data` is the file's content of `block` as written with `salt`.
  static bool HoldsBlock(const char* data, uint32_t block, unsigned salt) {
    for (uint32_t i = 0; i < kBlock; ++i) {
      if (data[i] != PatternByte(uint64_t{block} * kBlock + i, salt)) return false;
    }
    return true;
  }

  fs::path dir_;
  int fd_ = -1;
  char* buffers_ = nullptr;
  char* other_buffers_ = nullptr;  // a second engine's
  std::vector<std::unique_ptr<IoEngine>> engines_;
};

// Declares `var`, the engine under test, or skips the test when that engine cannot run here.
#define ENGINE_OR_SKIP(var)                                                    \
  if (const std::string why = ProbeEngine(GetParam()); !why.empty()) {         \
    GTEST_SKIP() << EngineKindName(GetParam()) << " cannot run here: " << why; \
  }                                                                            \
  IoEngine* var = Engine();                                                    \
  ASSERT_NE(var, nullptr)

TEST_P(IoEngineTest, ReadsWhatTheFileHoldsAtEachOffset) {
  ENGINE_OR_SKIP(engine);
  // Out of order, then a sequential run (sync skips its lseek there), in batches of the depth.
  for (const std::vector<uint32_t>& blocks :
       {std::vector<uint32_t>{5, 0, 40, 63}, {1, 2, 3, 4}, {17}, {18, 19}}) {
    std::memset(buffers_, 0, kDepth * kBlock);
    const auto done = Run(*engine, stats::Direction::kRead, blocks, buffers_);
    for (size_t i = 0; i < blocks.size(); ++i) {
      EXPECT_EQ(done[i].result, kBlock) << "block " << blocks[i];
      EXPECT_TRUE(HoldsBlock(buffers_ + i * kBlock, blocks[i], 0)) << "block " << blocks[i];
    }
  }
}

TEST_P(IoEngineTest, WritesLandAtTheirOffsetsAndNowhereElse) {
  ENGINE_OR_SKIP(engine);
  const std::vector<uint32_t> blocks{7, 3, 4, 60};
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (uint32_t b = 0; b < kBlock; ++b) {
      buffers_[i * kBlock + b] = PatternByte(uint64_t{blocks[i]} * kBlock + b, 1);
    }
  }
  const auto done = Run(*engine, stats::Direction::kWrite, blocks, buffers_);
  for (size_t i = 0; i < blocks.size(); ++i) EXPECT_EQ(done[i].result, kBlock);
  std::vector<char> check(kBlock);
  for (uint32_t block = 0; block < kBlocks; ++block) {
    ASSERT_EQ(pread(fd_, check.data(), kBlock, off_t{block} * kBlock), kBlock);
    const bool written = block == 7 || block == 3 || block == 4 || block == 60;
    EXPECT_TRUE(HoldsBlock(check.data(), block, written ? 1 : 0)) << "block " << block;
  }
}

TEST_P(IoEngineTest, ClonesOverOneDescriptorKeepTheirOwnPositions) {
  // Two workers of one job share the job's descriptor; sync reads at its file position and skips
  // the lseek when it is already there, so a shared position would read the other's block.
  ENGINE_OR_SKIP(first);
  IoEngine* second = Engine(other_buffers_);
  ASSERT_NE(second, nullptr);
  char* a = buffers_;
  char* b = other_buffers_;
  Run(*first, stats::Direction::kRead, {10}, a);
  Run(*second, stats::Direction::kRead, {30}, b);
  Run(*first, stats::Direction::kRead, {11}, a);
  Run(*second, stats::Direction::kRead, {31}, b);
  EXPECT_TRUE(HoldsBlock(a, 11, 0));
  EXPECT_TRUE(HoldsBlock(b, 31, 0));
}

TEST_P(IoEngineTest, DescribesItselfByFiosName) {
  ENGINE_OR_SKIP(engine);
  EXPECT_TRUE(engine->Describe().starts_with(EngineKindName(GetParam()))) << engine->Describe();
  EXPECT_TRUE(engine->RetriesEagain());
}

INSTANTIATE_TEST_SUITE_P(
    FileEngines, IoEngineTest,
    ::testing::Values(EngineKind::kPsync, EngineKind::kSync, EngineKind::kVsync,
                      EngineKind::kPvsync, EngineKind::kPvsync2, EngineKind::kPosixAio,
                      EngineKind::kMmap, EngineKind::kIoUring, EngineKind::kLibaio),
    [](const ::testing::TestParamInfo<EngineKind>& info) { return EngineKindName(info.param); });

TEST(Pvsync2EngineTest, NowaitMakesEagainTheIosResult) {
  std::unique_ptr<IoEngine> engine = ConstructEngine(EngineKind::kPvsync2);
  const int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EngineSetup setup;
  setup.fds = {fd};
  setup.hipri = true;
  setup.nowait = true;
  engine->Prepare(setup);
  EXPECT_EQ(engine->Describe(), "pvsync2+hipri+nowait");
  EXPECT_FALSE(engine->RetriesEagain());
  engine.reset();
  close(fd);
}

TEST(EngineKindTest, FiosSynchronousEnginesRunAtDepthOneWithANote) {
  for (EngineKind kind : {EngineKind::kSync, EngineKind::kPsync, EngineKind::kVsync,
                          EngineKind::kPvsync, EngineKind::kPvsync2, EngineKind::kMmap}) {
    JobSpec spec;
    spec.ioengine = kind;
    spec.queue.iodepth = 16;
    EXPECT_TRUE(spec.Synchronous()) << EngineKindName(kind);
    EXPECT_NE(spec.Normalize().find("synchronous"), std::string::npos);
    EXPECT_EQ(spec.queue.iodepth, 1u);
  }
  for (EngineKind kind : {EngineKind::kIoUring, EngineKind::kLibaio, EngineKind::kPosixAio}) {
    JobSpec spec;
    spec.ioengine = kind;
    spec.queue.iodepth = 16;
    EXPECT_FALSE(spec.Synchronous()) << EngineKindName(kind);
    EXPECT_EQ(spec.Normalize(), "");
    EXPECT_EQ(spec.queue.iodepth, 16u);
  }
  EXPECT_EQ(JobSpec{}.ioengine, EngineKind::kPsync);  // fio's default
}

TEST(EngineKindTest, ParsesFiosNamesOfTheEnginesIotailRuns) {
  for (const char* name : {"sync", "psync", "vsync", "pvsync", "pvsync2", "io_uring", "libaio",
                           "posixaio", "mmap", "falloc", "ftruncate", "null", "nbd"}) {
    EXPECT_EQ(EngineKindName(ParseEngineKind(name)), name);
  }
}

// The message of the UsageError that ParseEngineKind throws for `text` ("" if none).
std::string Refusal(const std::string& text) {
  try {
    ParseEngineKind(text);
  } catch (const stats::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(EngineKindTest, RefusesFiosOtherEnginesByName) {
  for (const char* name : {"rdma", "http", "net", "rbd", "sg", "io_uring_cmd", "dev-dax", "libpmem",
                           "splice", "cpuio", "xnvme"}) {
    const std::string why = Refusal(name);
    EXPECT_NE(why.find(std::string("--ioengine=") + name), std::string::npos) << why;
    EXPECT_NE(why.find(std::string("does not support fio's ") + name + " engine"),
              std::string::npos)
        << why;
  }
  const std::string typo = Refusal("psnyc");
  EXPECT_NE(typo.find("does not support engine 'psnyc'"), std::string::npos) << typo;
  EXPECT_NE(typo.find("did you mean psync?"), std::string::npos) << typo;
}

TEST(EngineKindTest, RefusesFiosExternalAndNameColonForms) {
  const std::string external = Refusal("external:/usr/lib/fio/engine.so");
  EXPECT_NE(external.find("does not support external engines"), std::string::npos) << external;
  const std::string path = Refusal("/usr/lib/fio/engine.so");
  EXPECT_NE(path.find("does not support external engines"), std::string::npos) << path;
  // fio would run psync and drop what follows ':'; iotail says so rather than guess.
  const std::string suffixed = Refusal("psync:anything");
  EXPECT_NE(suffixed.find("NAME:ARGUMENT"), std::string::npos) << suffixed;
  EXPECT_NE(suffixed.find("write --ioengine=psync"), std::string::npos) << suffixed;
}

TEST(EngineKindTest, EngineOptionsBelongToTheirEngines) {
  JobSpec spec;
  spec.filenames = {"f"};
  spec.ioengine = EngineKind::kPvsync2;
  spec.engine_options.hipri = true;
  spec.engine_options.nowait = true;
  EXPECT_NO_THROW(spec.Validate());
  spec.ioengine = EngineKind::kPsync;
  EXPECT_THROW(spec.Validate(), stats::UsageError);  // hipri
  spec.engine_options.hipri = false;
  EXPECT_THROW(spec.Validate(), stats::UsageError);  // nowait
  spec.engine_options.nowait = false;
  spec.ioengine = EngineKind::kPvsync2;
  spec.engine_options.uncached = 1;
  try {
    spec.Validate();
    ADD_FAILURE() << "uncached accepted";
  } catch (const stats::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("RWF_UNCACHED"), std::string::npos) << e.what();
  }
  spec.direct = true;  // fio ignores it with direct=1
  EXPECT_NO_THROW(spec.Validate());
  JobSpec mmap;
  mmap.filenames = {"f"};
  mmap.ioengine = EngineKind::kMmap;
  mmap.blocks.bs = 512;
  EXPECT_NO_THROW(mmap.Validate());
  mmap.syncs.fsync_every = 1;  // fio: "mmap options dictate a minimum block size of 4096 bytes"
  EXPECT_THROW(mmap.Validate(), stats::UsageError);
}

}  // namespace io_engine_test
}  // namespace iotail::engine
