#include "stats/util/parallel_for.h"

#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <thread>

namespace iotail::stats::parallel_detail {
namespace {

// Threads numbered 1, 2, ... that wait for a call, run their share of it and wait again. Used by
// one call at a time (`busy`); never destroyed (its threads wait until the process ends).
class Pool {
 public:
  std::mutex busy;

  // Hands share(call, t) for t in [1, count) to pool threads, starting threads as needed; returns
  // how many got one (t in [1, started]).
  unsigned Start(unsigned count, Share share, void* call) {
    const unsigned want = count - 1;
    while (started_ < want) {
      try {
        // A new thread has not seen the call about to be published.
        std::thread(&Pool::Loop, this, started_ + 1, generation_).detach();
      } catch (const std::system_error&) {
        break;  // a limit: the rest runs on the caller
      }
      ++started_;
    }
    const unsigned given = std::min(want, started_);
    {
      std::lock_guard lock(mutex_);
      share_ = share;
      call_ = call;
      wanted_ = given;
      remaining_ = given;
      ++generation_;
    }
    if (given > 0) wake_.notify_all();
    return given;
  }
  // Until every share handed out by Start has returned.
  void Wait() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return remaining_ == 0; });
  }

 private:
  void Loop(unsigned t, uint64_t seen) {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return generation_ != seen && t <= wanted_; });
      seen = generation_;
      const Share share = share_;
      void* const call = call_;
      lock.unlock();
      share(call, t);
      lock.lock();
      if (--remaining_ == 0) done_.notify_one();
    }
  }

  unsigned started_ = 0;  // only the holder of `busy` changes it
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;  // one per call; written under mutex_ by the holder of `busy`
  unsigned wanted_ = 0, remaining_ = 0;
  Share share_ = nullptr;
  void* call_ = nullptr;
};

// This process's pool: after fork() the child's copy has no threads, so it makes its own.
Pool& ThisProcessPool() {
  static std::mutex making;
  static Pool* pool = nullptr;
  static pid_t owner = 0;
  const pid_t me = getpid();
  std::lock_guard lock(making);
  if (pool == nullptr || owner != me) {
    pool = new Pool;  // the parent's, if any, is left as it is: its threads are not here
    owner = me;
  }
  return *pool;
}

// A busy pool: threads of this call's own.
void RunOnOwnThreads(unsigned count, Share share, void* call) {
  std::vector<std::thread> threads;
  std::vector<unsigned> on_caller = {0};
  for (unsigned t = 1; t < count; ++t) {
    try {
      threads.emplace_back(share, call, t);
    } catch (const std::system_error&) {
      on_caller.push_back(t);
    }
  }
  for (unsigned t : on_caller) share(call, t);
  for (auto& thread : threads) thread.join();
}

}  // namespace

void Run(unsigned count, Share share, void* call) {
  Pool& pool = ThisProcessPool();
  std::unique_lock busy(pool.busy, std::try_to_lock);
  if (!busy.owns_lock()) {
    RunOnOwnThreads(count, share, call);
    return;
  }
  const unsigned given = pool.Start(count, share, call);
  share(call, 0);
  for (unsigned t = given + 1; t < count; ++t) share(call, t);
  pool.Wait();
}

}  // namespace iotail::stats::parallel_detail
