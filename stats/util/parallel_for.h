// ParallelFor: runs a function over the indices [0, n) on a few threads, the caller's included.
//
// Thread t takes the indices t, t + threads, t + 2 * threads, ...: a fixed assignment, so that work
// accumulated per thread (floating-point sums) happens in the same order on every run and results
// are reproducible to the last bit. The other threads come from a process-wide pool, started on
// first use and kept waiting between calls (a merge makes dozens of parallel steps: a thread's
// start and join at each cost more than a wake-up). A call made while another call uses the pool
// (from another thread, or from inside fn) starts threads of its own. When a thread cannot be
// created (a process or memory limit), its share runs on the caller's thread instead, with the
// same t: fewer threads, the same results. The first exception thrown by fn stops the remaining
// work and is rethrown to the caller once every thread has finished its share. A child process
// (fork) gets a pool of its own.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <vector>

namespace iotail::stats {
namespace parallel_detail {

// One thread's share of a call: share(call, t).
using Share = void (*)(void* call, unsigned t);
// Runs share(call, t) for every t in [0, count): t = 0 (and any t no thread could be had for) on
// the caller's thread, the others on pool threads (or threads of its own when the pool is busy);
// returns once all have returned. share must not throw.
void Run(unsigned count, Share share, void* call);

}  // namespace parallel_detail

// Calls fn(i, t) for every i in [0, n), t being the thread (0 .. threads - 1).
template <typename Fn>
void ParallelFor(size_t n, unsigned threads, Fn&& fn) {
  if (threads == 0) threads = 1;
  std::vector<std::exception_ptr> errors(threads);
  std::atomic<bool> failed{false};
  auto work = [&](unsigned t) {
    try {
      for (size_t i = t; i < n && !failed.load(std::memory_order_relaxed); i += threads) fn(i, t);
    } catch (...) {
      errors[t] = std::current_exception();
      failed = true;
    }
  };
  // Threads past n would have nothing to do.
  const auto count = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(n, 1)));
  if (count == 1) {
    work(0);
  } else {
    parallel_detail::Run(
        count, [](void* call, unsigned t) { (*static_cast<decltype(work)*>(call))(t); }, &work);
  }
  for (auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

// Calls fn(i, t) for every i in [0, n) as ParallelFor does, but each thread takes the next index
// that no thread has taken yet: for work whose results do not depend on the thread that does it
// (no sums per thread), so that a thread that starts late (a pool thread's first start can take a
// millisecond) or a slow index holds up no other index. After an exception no index is taken any
// more; the one rethrown is that of the lowest index that threw (every lower index was taken
// before it and has finished), the same on every run.
template <typename Fn>
void ParallelForDynamic(size_t n, unsigned threads, Fn&& fn) {
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  size_t failed_index = n;
  std::exception_ptr failure;
  ParallelFor(std::min<size_t>(threads == 0 ? 1 : threads, std::max<size_t>(n, 1)), threads,
              [&](size_t, unsigned t) {
                for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
                     i = next.fetch_add(1, std::memory_order_relaxed)) {
                  try {
                    fn(i, t);
                  } catch (...) {
                    next.store(n, std::memory_order_relaxed);
                    std::lock_guard lock(failure_mutex);
                    if (i < failed_index) {
                      failed_index = i;
                      failure = std::current_exception();
                    }
                  }
                }
              });
  if (failure) std::rethrow_exception(failure);
}

}  // namespace iotail::stats
