// OpenByteSource: plain, gzip and zstd files made by the real gzip and zstd tools read back byte
// for byte, the format told by the first bytes whatever the name, and damaged or truncated
// streams refused with the file and the compressed byte offset.
#include "engine/replay/compressed_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include "tests/cli/cli_test_util.h"
#include "tests/engine/replay/blktrace_dump.h"

namespace iotail::engine::replay {
namespace compressed_source_test {

namespace fs = std::filesystem;
using iotail::testing::ReadFile;
using iotail::testing::RunShell;

// Lines like an iolog's, varied enough that the compressed file spans several input buffers.
std::string TraceText(size_t lines) {
  std::string text = "fio version 3 iolog\n";
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < lines; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    text += std::to_string(i * 200) + " /dev/sdb " + ((x & 1) != 0 ? "read " : "write ") +
            std::to_string((x >> 8) % (1ull << 34) * 512) + " " +
            std::to_string(4096u << ((x >> 40) % 5)) + "\n";
  }
  return text;
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Everything the source yields, read `chunk` bytes at a time.
std::string ReadAll(ByteSource& source, size_t chunk) {
  std::string out;
  std::string buf(chunk, '\0');
  for (size_t n; (n = source.Read(buf.data(), buf.size())) > 0;) out.append(buf.data(), n);
  EXPECT_EQ(source.Read(buf.data(), buf.size()), 0u) << "the end stays the end";
  return out;
}

// The message of the TraceFormatError reading `path` throws ("" if none).
std::string ReadError(const fs::path& path) {
  try {
    auto source = OpenByteSource(path.string());
    ReadAll(*source, 65536);
  } catch (const TraceFormatError& e) {
    return e.what();
  }
  return "";
}

class CompressedSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = iotail::testing::MakeScratchDir("iotail_compressed");
    text_ = TraceText(20000);  // about 900 KB
    WriteFile(dir_ / "trace.txt", text_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Runs `command` in the scratch directory; false (with the test failed) if it fails.
  void Shell(const std::string& command) {
    const auto result = RunShell("cd " + dir_.string() + " && " + command, dir_);
    ASSERT_EQ(result.status, 0) << command << ": " << result.err;
  }
  void SkipUnlessBuiltIn(Compression c) {
    if (!CompressionBuiltIn(c)) GTEST_SKIP() << "built without " << CompressionName(c);
  }
  fs::path dir_;
  std::string text_;
};

TEST_F(CompressedSourceTest, PlainFileReadsBackWhateverTheChunkSize) {
  for (size_t chunk : {7u, 4096u, 1u << 20}) {
    auto source = OpenByteSource((dir_ / "trace.txt").string());
    EXPECT_EQ(source->name(), (dir_ / "trace.txt").string());
    ASSERT_EQ(ReadAll(*source, chunk), text_) << "chunk " << chunk;
  }
}

TEST_F(CompressedSourceTest, DetectsByMagicBytes) {
  EXPECT_EQ(DetectCompression(std::string("\x1f\x8b\x08\x00", 4)), Compression::kGzip);
  EXPECT_EQ(DetectCompression(std::string("\x28\xb5\x2f\xfd", 4)), Compression::kZstd);
  EXPECT_EQ(DetectCompression(std::string("\x28\xb5\x2f", 3)), Compression::kNone);
  EXPECT_EQ(DetectCompression("fio version 2 iolog"), Compression::kNone);
  EXPECT_EQ(DetectCompression(""), Compression::kNone);
}

TEST_F(CompressedSourceTest, GzipMadeByGzipReadsBack) {
  SkipUnlessBuiltIn(Compression::kGzip);
  Shell("gzip -k -9 trace.txt");
  for (size_t chunk : {1u, 4096u, 1u << 20}) {
    auto source = OpenByteSource((dir_ / "trace.txt.gz").string());
    ASSERT_EQ(ReadAll(*source, chunk), text_) << "chunk " << chunk;
  }
}

TEST_F(CompressedSourceTest, ZstdMadeByZstdReadsBack) {
  SkipUnlessBuiltIn(Compression::kZstd);
  Shell("zstd -q trace.txt -o trace.txt.zst");
  for (size_t chunk : {1u, 4096u, 1u << 20}) {
    auto source = OpenByteSource((dir_ / "trace.txt.zst").string());
    ASSERT_EQ(ReadAll(*source, chunk), text_) << "chunk " << chunk;
  }
}

TEST_F(CompressedSourceTest, ConcatenatedMembersAndFramesReadAsOne) {
  SkipUnlessBuiltIn(Compression::kGzip);
  SkipUnlessBuiltIn(Compression::kZstd);
  Shell("gzip -c trace.txt > two.gz && gzip -c trace.txt >> two.gz");
  Shell("zstd -q -c trace.txt > two.zst && zstd -q -c trace.txt >> two.zst");
  for (const char* name : {"two.gz", "two.zst"}) {
    auto source = OpenByteSource((dir_ / name).string());
    EXPECT_EQ(ReadAll(*source, 10000), text_ + text_) << name;
  }
}

TEST_F(CompressedSourceTest, TheNameDoesNotDecide) {
  SkipUnlessBuiltIn(Compression::kZstd);
  // zstd data under a .gz name, plain text under a .zst name.
  Shell("zstd -q -c trace.txt > looks.gz && cp trace.txt looks.zst");
  EXPECT_EQ(ReadAll(*OpenByteSource((dir_ / "looks.gz").string()), 65536), text_);
  EXPECT_EQ(ReadAll(*OpenByteSource((dir_ / "looks.zst").string()), 65536), text_);
}

TEST_F(CompressedSourceTest, ReadsFromAPipe) {
  SkipUnlessBuiltIn(Compression::kGzip);
  Shell("gzip -c trace.txt > trace.gz && mkfifo pipe");
  const std::string gz = ReadFile(dir_ / "trace.gz");
  std::thread writer([&] { WriteFile(dir_ / "pipe", gz); });
  std::string got;
  try {
    got = ReadAll(*OpenByteSource((dir_ / "pipe").string()), 4096);
  } catch (...) {
    writer.join();
    throw;
  }
  writer.join();
  EXPECT_EQ(got, text_);
}

TEST_F(CompressedSourceTest, PeekShowsTheDecompressedHeadThenReadServesItAgain) {
  SkipUnlessBuiltIn(Compression::kZstd);
  Shell("zstd -q trace.txt -o trace.txt.zst");
  PeekableSource source(OpenByteSource((dir_ / "trace.txt.zst").string()));
  EXPECT_EQ(source.Peek(19), "fio version 3 iolog");
  EXPECT_EQ(source.Peek(4), "fio ");
  EXPECT_EQ(source.name(), (dir_ / "trace.txt.zst").string());
  EXPECT_EQ(ReadAll(source, 5), text_);
  // A peek past the end gives what there is.
  PeekableSource tiny(OpenByteSource((dir_ / "trace.txt").string()));
  const std::string all = text_;
  EXPECT_EQ(tiny.Peek(all.size() + 100), all);
  EXPECT_EQ(ReadAll(tiny, 65536), all);
}

TEST_F(CompressedSourceTest, DecompressWrapsAnySource) {
  SkipUnlessBuiltIn(Compression::kGzip);
  SkipUnlessBuiltIn(Compression::kZstd);
  Shell("gzip -k trace.txt && zstd -q trace.txt -o trace.txt.zst");
  const struct {
    const char* file;
    Compression compression;
  } cases[] = {{"trace.txt.gz", Compression::kGzip},
               {"trace.txt.zst", Compression::kZstd},
               {"trace.txt", Compression::kNone}};
  for (const auto& c : cases) {
    auto source = Decompress(
        c.compression, std::make_unique<iotail::testing::MemorySource>(ReadFile(dir_ / c.file)));
    EXPECT_EQ(source->name(), "mem.bin");
    EXPECT_EQ(ReadAll(*source, 4096), text_) << c.file;
  }
}

TEST_F(CompressedSourceTest, TruncatedStreamsNameFileAndOffset) {
  SkipUnlessBuiltIn(Compression::kGzip);
  SkipUnlessBuiltIn(Compression::kZstd);
  Shell("gzip -c trace.txt > full.gz && head -c 30000 full.gz > cut.gz");
  Shell("zstd -q -c trace.txt > full.zst && head -c 30000 full.zst > cut.zst");
  // A gzip stream cut just before its 8-byte trailer (CRC and length) is truncated too.
  Shell("head -c $(($(stat -c %s full.gz) - 4)) full.gz > no_trailer.gz");
  for (const char* name : {"cut.gz", "cut.zst", "no_trailer.gz"}) {
    const std::string error = ReadError(dir_ / name);
    EXPECT_NE(error.find((dir_ / name).string()), std::string::npos) << error;
    EXPECT_NE(error.find("ends early"), std::string::npos) << error;
  }
  EXPECT_NE(ReadError(dir_ / "cut.gz").find("after 30000 compressed bytes"), std::string::npos);
}

TEST_F(CompressedSourceTest, CorruptStreamsNameFileAndOffset) {
  SkipUnlessBuiltIn(Compression::kGzip);
  SkipUnlessBuiltIn(Compression::kZstd);
  Shell("gzip -c trace.txt > bad.gz && zstd -q -c trace.txt > bad.zst");
  // 64 bytes of garbage over the middle of each compressed stream.
  for (const char* name : {"bad.gz", "bad.zst"}) {
    Shell(std::string("printf '%064d' 7 | dd of=") + name +
          " bs=1 seek=20000 conv=notrunc status=none");
    const std::string error = ReadError(dir_ / name);
    EXPECT_NE(error.find((dir_ / name).string()), std::string::npos) << error;
    EXPECT_NE(error.find("damaged"), std::string::npos) << error;
    EXPECT_NE(error.find("at compressed byte"), std::string::npos) << error;
  }
}

TEST_F(CompressedSourceTest, MissingFileIsASystemErrorNamingIt) {
  try {
    OpenByteSource((dir_ / "absent").string());
    FAIL() << "opened a missing file";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "absent").string()), std::string::npos);
  }
}

}  // namespace compressed_source_test
}  // namespace iotail::engine::replay
