// The log reader's input: regular files, pipes, a file opened again, and the read buffer it lends.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "stats/logs/log_reader.h"
#include "tests/stats/logs/log_test_util.h"

namespace iotail::stats {
namespace log_reader_input_test {

TEST(LogReaderTest, ReadsAPipeFromItsStartOnlyAndReopensTheSameFileCheaply) {
  const std::string data = Line(100, 0, {{1, 1}}) + Line(200, 1, {{2, 2}});
  const auto path = std::filesystem::temp_directory_path() /
                    ("iotail_reader_fifo_" + std::to_string(::getpid()) + ".log");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  for (const uint64_t begin : {uint64_t{0}, uint64_t{5}}) {
    SCOPED_TRACE(begin);
    // The reader may close before the writer writes: the write then fails with EPIPE, and
    // SIGPIPE, blocked in the writer's thread only, must not end the test.
    std::thread writer([&] {
      sigset_t pipe_signal;
      sigemptyset(&pipe_signal);
      sigaddset(&pipe_signal, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
      std::ofstream(path, std::ios::binary) << data;
    });
    LogReaderOptions options;
    options.begin_offset = begin;
    options.begin_inside_line = true;
    LogReader reader(path.string(), options);
    if (begin == 0) {
      const auto records = ReadAll(reader, nullptr);
      ASSERT_EQ(records.size(), 2u);
      EXPECT_EQ(records[1].end_ms, 200);
    } else {
      // A pipe cannot start anywhere but where it stands: an error, never other records.
      EXPECT_THROW(reader.Next(), std::system_error);
    }
    reader.Close();
    writer.join();
  }
  std::filesystem::remove(path);
  // A regular file opened again by the same reader (the descriptor kept) reads the same.
  const auto file = std::filesystem::temp_directory_path() /
                    ("iotail_reader_again_" + std::to_string(::getpid()) + ".log");
  std::ofstream(file, std::ios::binary) << data;
  LogReader reader(file.string());
  ASSERT_TRUE(reader.Next());
  LogReaderOptions second;
  second.begin_offset = Line(100, 0, {{1, 1}}).size();
  second.first_line = 2;
  reader.Open(file.string(), second);
  ASSERT_TRUE(reader.Next());
  EXPECT_EQ(reader.record().end_ms, 200);
  EXPECT_EQ(reader.record().line, 2u);
  EXPECT_FALSE(reader.Next());
  std::filesystem::remove(file);
}

TEST(LogReaderTest, LendsItsBufferClosedAndReadsOverWhatWasLeftInIt) {
  const std::string data = Line(100, 0, {{1, 1}}) + Line(200, 1, {{2, 2}});
  const auto file = std::filesystem::temp_directory_path() /
                    ("iotail_reader_lend_" + std::to_string(::getpid()) + ".log");
  std::ofstream(file, std::ios::binary) << data;
  LogReader reader(file.string());
  ASSERT_TRUE(reader.Next());
  // Lent while a file is open: the reader closes it first.
  LargeBuffer& lent = reader.idle_buffer();
  EXPECT_FALSE(reader.Next());
  ASSERT_GE(lent.size_bytes(), data.size());
  const char* storage = lent.bytes();
  std::memset(lent.bytes(), '7', lent.size_bytes());  // what a scan might leave
  reader.Open(file.string(), {});
  ASSERT_TRUE(reader.Next());
  EXPECT_EQ(reader.record().end_ms, 100);
  EXPECT_EQ(reader.record().counts[1], 1u);
  ASSERT_TRUE(reader.Next());
  EXPECT_EQ(reader.record().end_ms, 200);
  EXPECT_EQ(reader.record().counts[2], 2u);
  EXPECT_FALSE(reader.Next());
  EXPECT_EQ(reader.idle_buffer().bytes(), storage);  // the same buffer, not a new one
  // A buffer replaced by the borrower (a scan that needed a larger one) is the one used next.
  reader.idle_buffer() = LargeBuffer::Bytes(size_t{4} << 20);
  const char* larger = reader.idle_buffer().bytes();
  reader.Open(file.string(), {});
  ASSERT_TRUE(reader.Next());
  EXPECT_EQ(reader.record().end_ms, 100);
  EXPECT_EQ(reader.idle_buffer().bytes(), larger);
  std::filesystem::remove(file);
}

TEST(LogReaderTest, MissingFileIsASystemError) {
  EXPECT_THROW(LogReader("/nonexistent/iotail/x.log"), std::system_error);
}

}  // namespace log_reader_input_test
}  // namespace iotail::stats
