// ParallelFor: runs a function over the indices [0, n) on a few threads, the caller's included.
//
// Thread t takes the indices t, t + threads, t + 2 * threads, ...: a fixed assignment, so that work
// accumulated per thread (floating-point sums) happens in the same order on every run and results
// are reproducible to the last bit. When a thread cannot be created (a process or memory limit),
// its share runs on the caller's thread instead, with the same t: fewer threads, the same results.
// The first exception thrown by fn stops the remaining work and is rethrown to the caller once
// every thread has joined.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace iotail::stats {

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
  std::vector<std::thread> pool;
  std::vector<unsigned> on_caller = {0};
  for (unsigned t = 1; t < threads && t < n; ++t) {
    try {
      pool.emplace_back(work, t);
    } catch (const std::system_error&) {
      on_caller.push_back(t);
    }
  }
  for (unsigned t : on_caller) work(t);
  for (auto& thread : pool) thread.join();
  for (auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace iotail::stats
