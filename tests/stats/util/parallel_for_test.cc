#include "stats/util/parallel_for.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace iotail::stats {
namespace parallel_for_test {

TEST(ParallelForTest, EveryIndexOnceOnItsFixedThread) {
  std::vector<std::atomic<int>> seen(1000);
  std::vector<std::atomic<int>> wrong(1);
  ParallelFor(seen.size(), 4, [&](size_t i, unsigned t) {
    seen[i].fetch_add(1);
    if (i % 4 != t) wrong[0].fetch_add(1);
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_EQ(wrong[0].load(), 0);
}

TEST(ParallelForTest, TheFirstExceptionReachesTheCaller) {
  EXPECT_THROW(ParallelFor(100, 3,
                           [](size_t i, unsigned) {
                             if (i == 50) throw std::runtime_error("x");
                           }),
               std::runtime_error);
}

TEST(ParallelForTest, DynamicRunsEveryIndexOnceOnAnyThread) {
  std::vector<std::atomic<int>> seen(1000);
  std::atomic<int> bad_thread{0};
  ParallelForDynamic(seen.size(), 4, [&](size_t i, unsigned t) {
    seen[i].fetch_add(1);
    if (t >= 4) bad_thread.fetch_add(1);
  });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_EQ(bad_thread.load(), 0);
  int calls = 0;
  ParallelForDynamic(0, 4, [&](size_t, unsigned) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelForTest, DynamicRethrowsTheLowestIndexsExceptionAndTakesNoMoreIndices) {
  // Indices 30 and 60 throw; whichever thread reaches which first, the caller gets index 30's
  // (every index below 60 was taken before it and has finished), and no index past the
  // failure is started once every thread has seen it.
  for (int round = 0; round < 20; ++round) {
    std::atomic<size_t> ran{0};
    try {
      ParallelForDynamic(100'000, 3, [&](size_t i, unsigned) {
        ran.fetch_add(1);
        if (i == 30 || i == 60) throw std::runtime_error(std::to_string(i));
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "30") << "round " << round;
    }
    EXPECT_LT(ran.load(), 100'000u) << "round " << round;
  }
}

TEST(ParallelForTest, LaterCallsReuseThePoolsThreads) {
  // The threads of the first call wait for the next one: the same thread ids, no new thread.
  auto ids = [] {
    std::vector<std::thread::id> id(3);
    ParallelFor(3, 3, [&](size_t i, unsigned) { id[i] = std::this_thread::get_id(); });
    return id;
  };
  const std::vector<std::thread::id> first = ids();
  EXPECT_EQ(first[0], std::this_thread::get_id());
  EXPECT_NE(first[1], first[0]);
  EXPECT_NE(first[2], first[1]);
  for (int call = 0; call < 50; ++call) EXPECT_EQ(ids(), first) << "call " << call;
}

TEST(ParallelForTest, NestedAndConcurrentCallsEachRunEveryIndex) {
  // A call from inside fn, and calls from several threads at once, find the pool busy and run on
  // threads of their own: every index once, on its own t.
  std::atomic<int> wrong{0};
  auto inner = [&](size_t n) {
    std::vector<std::atomic<int>> seen(n);
    ParallelFor(n, 3, [&](size_t i, unsigned t) {
      seen[i].fetch_add(1);
      if (i % 3 != t) wrong.fetch_add(1);
    });
    for (const auto& s : seen) wrong.fetch_add(s.load() != 1);
  };
  ParallelFor(8, 2, [&](size_t i, unsigned) { inner(10 + i); });
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int k = 0; k < 20; ++k) inner(7);
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

// When threads cannot be created (here: an address-space limit too small for their stacks), the
// work runs on the caller's thread with the same assignment; it called std::terminate (issue 25).
TEST(ParallelForTest, ThreadsThatCannotBeCreatedRunOnTheCaller) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    size_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (4 << 20);
    const rlimit rl{limit, limit};  // below one more 8 MiB thread stack
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(3);
    // glibc keeps a few stacks of ended threads for reuse: ask for more than it keeps.
    constexpr unsigned kThreads = 32;
    bool created = true;
    {
      std::vector<std::thread> probe;
      try {
        for (unsigned t = 0; t < kThreads; ++t) probe.emplace_back([] {});
      } catch (const std::system_error&) {
        created = false;
      }
      for (auto& thread : probe) thread.join();
    }
    if (created) _exit(4);  // the limit did not stop threads: nothing to test
    std::vector<int> seen(256, 0);
    std::vector<int> wrong(1, 0);
    ParallelFor(seen.size(), kThreads, [&](size_t i, unsigned t) {
      ++seen[i];  // each index has one owner thread: no race
      if (i % kThreads != t) ++wrong[0];
    });
    for (int s : seen) {
      if (s != 1) _exit(1);
    }
    _exit(wrong[0] == 0 ? 0 : 2);
  }
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st)) << "the child died of signal " << WTERMSIG(st);
  if (WEXITSTATUS(st) == 4) GTEST_SKIP() << "RLIMIT_AS did not stop thread creation here";
  EXPECT_EQ(WEXITSTATUS(st), 0);
}

}  // namespace parallel_for_test
}  // namespace iotail::stats
