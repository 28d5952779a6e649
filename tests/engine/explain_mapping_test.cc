// Matching a target's offsets to what the block tracepoints show: tracefs format files parsed to
// field offsets, FIEMAP extents to device bytes (holes and unwritten extents have none), a file or
// device to the disk whose requests carry its I/O; and, on ext4 over a loop device, a file's
// direct reads traced at exactly the sectors its extents name.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <sys/mount.h>

#include <filesystem>

#include "engine/explain/block_tracer.h"
#include "engine/explain/file_extents.h"
#include "engine/explain/trace_device.h"
#include "engine/explain/tracepoint_format.h"
#include "tests/engine/explain_fixture.h"

namespace iotail::testing {
namespace explain_mapping_test {

using engine::FileExtent;
using engine::FileExtents;
using engine::TraceDevice;

// events/block/block_rq_complete/format of Linux 6.18.
constexpr const char* kCompleteFormat = R"(name: block_rq_complete
ID: 2107
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:dev_t dev;	offset:8;	size:4;	signed:0;
	field:sector_t sector;	offset:16;	size:8;	signed:0;
	field:unsigned int nr_sector;	offset:24;	size:4;	signed:0;
	field:int error;	offset:28;	size:4;	signed:1;
	field:unsigned short ioprio;	offset:32;	size:2;	signed:0;
	field:char rwbs[10];	offset:34;	size:10;	signed:0;
	field:__data_loc char[] cmd;	offset:44;	size:4;	signed:0;

print fmt: "%d,%d %s (%s) %llu + %u", ((unsigned int) ((REC->dev) >> 20)), REC->rwbs
)";

TEST(TracepointFormatTest, FieldsHaveTheirOffsetsAndSizes) {
  const auto fields = engine::ParseTracepointFormat(kCompleteFormat);
  ASSERT_EQ(fields.size(), 11u);
  auto expect = [&](const char* name, uint32_t offset, uint32_t size) {
    const auto field = engine::FindField(fields, name);
    ASSERT_TRUE(field.has_value()) << name;
    EXPECT_EQ(field->offset, offset) << name;
    EXPECT_EQ(field->size, size) << name;
  };
  expect("dev", 8, 4);
  expect("sector", 16, 8);
  expect("nr_sector", 24, 4);
  expect("error", 28, 4);
  expect("rwbs", 34, 10);
  expect("cmd", 44, 4);
  EXPECT_FALSE(engine::FindField(fields, "bytes").has_value());
}

TEST(FileExtentsTest, OffsetsMapInsideExtentsOnly) {
  const FileExtents extents({
      {.logical = 1 << 20, .physical = 900 << 20, .length = 1 << 20, .flags = 0},
      {.logical = 0, .physical = 100 << 20, .length = 64 << 10, .flags = 0},
      {.logical = 2 << 20,
       .physical = 50 << 20,
       .length = 4096,
       .flags = FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_LAST},
  });
  EXPECT_EQ(extents.PhysicalByte(0), std::optional<uint64_t>(100 << 20));
  EXPECT_EQ(extents.PhysicalByte(4096), std::optional<uint64_t>((100 << 20) + 4096));
  EXPECT_EQ(extents.PhysicalByte((64 << 10) - 1), std::optional<uint64_t>((100 << 20) + 65535));
  EXPECT_FALSE(extents.PhysicalByte(64 << 10).has_value()) << "a hole";
  EXPECT_EQ(extents.PhysicalByte((1 << 20) + 8192), std::optional<uint64_t>((900 << 20) + 8192));
  EXPECT_FALSE(extents.PhysicalByte(2 << 20).has_value()) << "unwritten: read without I/O";
  EXPECT_FALSE(extents.PhysicalByte(3 << 20).has_value()) << "past the end";
}

TEST(TraceDeviceTest, TmpfsFileHasNoBlockDevice) {
  const std::string path = "/dev/shm/iotail_trace_device_" + std::to_string(::getpid());
  { std::ofstream(path) << "x"; }
  const auto device = engine::TraceDeviceOf(path);
  std::filesystem::remove(path);
  const auto* why = std::get_if<std::string>(&device);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(why->find("not a block device"), std::string::npos) << *why;
  const auto missing = engine::TraceDeviceOf(std::string("/nonexistent/iotail"));
  ASSERT_TRUE(std::holds_alternative<std::string>(missing));
  EXPECT_NE(std::get<std::string>(missing).find("/nonexistent/iotail"), std::string::npos);
}

// ext4 on a loop device, mounted on a temporary directory; everything undone by the destructor.
class Ext4OnLoop {
 public:
  ~Ext4OnLoop() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string Start() {
    if (std::string why = loop_.AttachNewFile(64 << 20); !why.empty()) return why;
    // No background initialisation: its writes would share the traced disk with the test's reads.
    const auto [status, out] =
        RunShell("mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 " + loop_.path());
    if (status != 0) return "mkfs.ext4: " + out;
    dir_ = std::filesystem::temp_directory_path() / ("iotail_ext4_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    if (::mount(loop_.path().c_str(), dir_.c_str(), "ext4", MS_NOATIME, nullptr) != 0) {
      return std::string("cannot mount ext4: ") + std::strerror(errno);
    }
    mounted_ = true;
    return {};
  }
  const LoopDevice& loop() const { return loop_; }
  std::filesystem::path file() const { return dir_ / "data"; }

 private:
  LoopDevice loop_;
  std::filesystem::path dir_;
  bool mounted_ = false;
};

TEST(BlockTracerTest, FileOffsetsMapToTheSectorsTracedOnItsDevice) {
  Ext4OnLoop fs;
  if (std::string why = fs.Start(); !why.empty()) GTEST_SKIP() << why;
  const std::string file = fs.file().string();
  {
    const int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    const std::string block(1 << 20, 'a');
    ASSERT_EQ(::pwrite(fd, block.data(), block.size(), 0), static_cast<ssize_t>(block.size()));
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
  }
  const auto device = engine::TraceDeviceOf(file);
  ASSERT_TRUE(std::holds_alternative<TraceDevice>(device)) << std::get<std::string>(device);
  const TraceDevice& d = std::get<TraceDevice>(device);
  EXPECT_EQ(d.disk, fs.loop().rdev());
  EXPECT_EQ(d.start_sector, 0u);
  EXPECT_TRUE(d.through_filesystem);
  const int fd = ::open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const FileExtents extents = FileExtents::Of(fd, file);
  ::close(fd);
  ASSERT_FALSE(extents.extents().empty());

  std::unique_ptr<engine::BlockTracer> tracer;
  IOTAIL_OPEN_TRACER_OR_SKIP(tracer, std::span(&d.disk, 1), 0);
  const std::vector<uint64_t> offsets = {0, 256 << 10, 768 << 10, (1 << 20) - 4096};
  // Each read's request at the sector its extent names (the filesystem's own requests, its
  // journal and metadata, are elsewhere on the disk).
  const std::vector<TracedRead> reads =
      TracedReads(*tracer, file, d.disk, offsets, [&](uint64_t offset) {
        return extents.PhysicalByte(offset).value_or(0) / 512 + d.start_sector;
      });
  ASSERT_EQ(reads.size(), offsets.size());
  for (const TracedRead& read : reads) {
    ASSERT_TRUE(extents.PhysicalByte(read.read.offset).has_value()) << read.read.offset;
    ASSERT_TRUE(read.request.has_value()) << read.read.offset;
    EXPECT_EQ(read.request->op, engine::BlockOp::kRead);
    EXPECT_EQ(read.request->nr_sector, 8u);
    EXPECT_LE(read.read.before_ns, read.request->entered_ns);
    EXPECT_LE(read.request->complete_ns, read.read.after_ns);
  }
}

// A partition's I/O is traced on its disk, at the partition's first sector plus the offset; the
// partition itself is refused (the tracepoints never name it).
TEST(BlockTracerTest, PartitionIsTracedOnItsDiskFromItsFirstSector) {
  LoopDevice disk;
  if (std::string why = disk.AttachNewFile(32 << 20); !why.empty()) GTEST_SKIP() << why;
  if (RunShell("command -v sfdisk").first != 0) GTEST_SKIP() << "sfdisk not installed (fdisk)";
  ASSERT_EQ(RunShell("printf 'label: gpt\\n,16M\\n,\\n' | sfdisk -q " + disk.path()).first, 0);
  RunShell("partx -u " + disk.path() + " || blockdev --rereadpt " + disk.path());
  const std::string part = disk.path() + "p2";
  if (!std::filesystem::exists(part)) GTEST_SKIP() << "no partition devices for " << disk.path();
  // The second partition's start, as sfdisk tells it ("...p2 : start=       34816, size=...").
  const auto [status, dump] = RunShell("sfdisk -d " + disk.path() + " | grep '^" + part + " '");
  ASSERT_EQ(status, 0) << dump;
  const uint64_t start = std::stoull(dump.substr(dump.find("start=") + 6));

  const auto device = engine::TraceDeviceOf(part);
  ASSERT_TRUE(std::holds_alternative<TraceDevice>(device)) << std::get<std::string>(device);
  EXPECT_EQ(std::get<TraceDevice>(device).disk, disk.rdev());
  EXPECT_EQ(std::get<TraceDevice>(device).start_sector, start);
  EXPECT_FALSE(std::get<TraceDevice>(device).through_filesystem);

  struct stat st {};
  ASSERT_EQ(::stat(part.c_str(), &st), 0);
  const dev_t part_dev = st.st_rdev, disk_dev = disk.rdev();
  const auto refused = engine::BlockTracer::Open(std::span(&part_dev, 1), 0);
  if (const auto* why = std::get_if<engine::TracerUnavailable>(&refused)) {
    EXPECT_NE(why->reason.find("partition"), std::string::npos) << why->reason;
  } else {
    ADD_FAILURE() << "a partition was accepted: its requests are named by its disk";
  }
  std::unique_ptr<engine::BlockTracer> tracer;
  IOTAIL_OPEN_TRACER_OR_SKIP(tracer, std::span(&disk_dev, 1), 0);
  const std::vector<TracedRead> reads =
      TracedReads(*tracer, part, disk_dev, {4096, 1 << 20},
                  [&](uint64_t offset) { return start + offset / 512; });
  ASSERT_EQ(reads.size(), 2u);
  for (const TracedRead& read : reads) {
    ASSERT_TRUE(read.request.has_value()) << read.read.offset;
    EXPECT_EQ(read.request->sector, start + read.read.offset / 512);
    EXPECT_EQ(read.request->dev, disk_dev);
  }
}

}  // namespace explain_mapping_test
}  // namespace iotail::testing
