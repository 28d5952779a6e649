#include "mpi/exchange.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <thread>

#include "engine/clock.h"

namespace iotail::mpi {

namespace {
constexpr auto kPoll = std::chrono::milliseconds(1);
}  // namespace

// Completes a non-blocking collective by testing it with short sleeps: a rank that waits for the
// others (a slower rank, rank 0's --prometheus_linger) costs next to no CPU, where Open MPI's
// blocking calls poll a whole core.
void Wait(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(kPoll);
  }
}

std::chrono::milliseconds SilenceWarning(uint64_t period_ms) {
  return std::chrono::milliseconds(std::max<uint64_t>(3 * period_ms, 3000));
}

std::chrono::milliseconds SilenceGrace(uint64_t period_ms) {
  return std::chrono::milliseconds(std::max<uint64_t>(5 * period_ms, 5000));
}

// Rank 0: a batch's common start once every rank is ready: on the log period, a lead ahead that
// covers sending it (four of the slowest round trips, and 100 ms for the ranks' wake-up).
uint64_t ChooseStart(const Cluster& c, uint64_t period_ms) {
  const uint64_t lead_ms = 100 + (4 * c.max_rtt_ns + 999'999) / 1'000'000;
  const uint64_t now_ms = engine::Clock::RealtimeNs() / 1'000'000;
  return ((now_ms + lead_ms) / period_ms + 1) * period_ms;
}

Exchange::Exchange(const Cluster& c, uint64_t setup_timeout_ns, Shared& shared, Mailbox& mailbox)
    : c_(c),
      setup_timeout_(setup_timeout_ns),
      shared_(shared),
      mailbox_(mailbox),
      done_(c.size, false),
      heard_(c.size, Clock::now()),
      warned_(c.size, false) {
  shared_.totals.resize(static_cast<size_t>(c.size));
  shared_.has_totals.assign(static_cast<size_t>(c.size), false);
  shared_.lost_silence_s.assign(static_cast<size_t>(c.size), 0.0);
}

// Runs until every rank is done; throws std::runtime_error (with the failing rank's status in
// status()) when the run or a message fails.
void Exchange::Loop() {
  for (;;) {
    bool progress = false;
    if (c_.rank == 0 && !cluster_) MakeCluster();
    progress = Local() || progress;
    progress = Ready() || progress;
    if (c_.rank == 0 && cluster_) {
      progress = Receive() || progress;
      CheckSilence();
    }
    if (c_.rank != 0) progress = ReceiveStart() || progress;
    TestSends();
    bool finished = sent_done_ && sends_.empty();
    if (c_.rank == 0) {
      for (int r = 0; r < c_.size; ++r) finished = finished && done_[static_cast<size_t>(r)];
    }
    if (finished) return;
    if (!progress) std::this_thread::sleep_for(kPoll);
  }
}

void Exchange::MakeCluster() {
  std::lock_guard lock(shared_.mu);
  if (!shared_.jobs_known) return;
  cluster_ = shared_.cluster.get();
  period_ms_ = shared_.period_ms;
}

bool Exchange::Ready() {
  bool progress = false;
  {
    std::lock_guard lock(shared_.mu);
    for (; ready_told_ < shared_.ready; ++ready_told_, progress = true) {
      if (c_.rank == 0) {
        MarkReady(0, ready_told_);
      } else {
        Send(kTagReady, {ready_told_});
      }
    }
  }
  if (c_.rank != 0) return progress;
  for (size_t b = started_; b < ready_ranks_.size(); ++b) {
    if (ready_ranks_[b].size() < static_cast<size_t>(c_.size)) {
      if (Clock::now() - first_ready_[b] > setup_timeout_) throw std::runtime_error(Stragglers(b));
      break;
    }
    const uint64_t start = ChooseStart(c_, period_ms_);
    for (int r = 1; r < c_.size; ++r) Send(kTagStart, {b, start}, r);
    SetStart(b, start);
    started_ = b + 1;
    progress = true;
  }
  return progress;
}

void Exchange::MarkReady(int rank, uint64_t batch) {
  if (ready_ranks_.size() <= batch) {
    ready_ranks_.resize(batch + 1);
    first_ready_.resize(batch + 1, Clock::now());
  }
  ready_ranks_[batch].insert(rank);
}

std::string Exchange::Stragglers(size_t batch) const {
  std::string names;
  for (int r = 0; r < c_.size; ++r) {
    if (ready_ranks_[batch].count(r) == 0) {
      names += fmt::format("{}rank {} ({})", names.empty() ? "" : ", ", r, c_.Name(r));
    }
  }
  return fmt::format(
      "{} not ready to start after {:.0f} s (--setup_timeout): still opening or laying out "
      "targets, or stopped",
      names, std::chrono::duration<double>(setup_timeout_).count());
}

void Exchange::SetStart(uint64_t batch, uint64_t start_ms) {
  std::lock_guard lock(shared_.mu);
  if (shared_.starts.size() <= batch) shared_.starts.resize(batch + 1, 0);
  shared_.starts[batch] = start_ms;
  shared_.cv.notify_all();
}

bool Exchange::ReceiveStart() {
  int flag = 0;
  MPI_Iprobe(0, kTagStart, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  if (!flag) return false;
  uint64_t words[2] = {};
  MPI_Recv(words, 2, MPI_UINT64_T, 0, kTagStart, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  SetStart(words[0], words[1]);
  return true;
}

void Exchange::Send(int tag, std::vector<uint64_t> words, int to) {
  auto data = std::make_shared<std::vector<uint64_t>>(std::move(words));
  MPI_Request req;
  MPI_Isend(data->data(), static_cast<int>(data->size()), MPI_UINT64_T, to, tag, MPI_COMM_WORLD,
            &req);
  sends_.emplace_back(req, std::move(data));
}

void Exchange::Handle(int from, int tag, std::span<const uint64_t> words) {
  if (tag == kTagReady) {
    MarkReady(from, words.empty() ? 0 : words[0]);
  } else if (tag == kTagInterval) {
    cluster_->reducer().Add(from, DecodeInterval(words));
  } else if (tag == kTagExplain) {
    if (words.empty()) throw std::runtime_error("explain: no stage");
    cluster_->explain(words[0]).Add(from, DecodeInterval(words.subspan(1)));
  } else if (tag == kTagTotals) {
    shared_.totals[static_cast<size_t>(from)] = DecodeTotals(words);
    shared_.has_totals[static_cast<size_t>(from)] = true;
    // Its stage intervals all came before (MPI keeps one sender's order): none is awaited, so the
    // stage logs end even where a rank's explain session sent no final interval.
    cluster_->ExplainDone(from);
  } else if (tag == kTagDone) {
    done_[static_cast<size_t>(from)] = true;
    cluster_->RankDone(from);
  }
}

bool Exchange::Local() {
  std::deque<Message> local = mailbox_.TakeAll();
  if (shared_.run_done.load() && !sent_done_) {
    std::lock_guard lock(shared_.mu);
    if (!shared_.failure.empty()) {
      status_ = shared_.status;
      throw std::runtime_error(shared_.failure);
    }
    local.push_back({kTagDone, {static_cast<uint64_t>(shared_.status)}});
    sent_done_ = true;
  }
  for (Message& m : local) {
    if (c_.rank == 0) {
      if (cluster_) Handle(0, m.tag, m.words);  // intervals come only after the jobs are known
      continue;
    }
    Send(m.tag, std::move(m.words));
  }
  return !local.empty();
}

bool Exchange::Receive() {
  bool progress = false;
  for (int flag = 1; flag;) {
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) break;
    int count = 0;
    MPI_Get_count(&st, MPI_UINT64_T, &count);
    std::vector<uint64_t> words(static_cast<size_t>(count));
    MPI_Recv(words.data(), count, MPI_UINT64_T, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    progress = true;
    heard_[static_cast<size_t>(st.MPI_SOURCE)] = Clock::now();
    try {
      Handle(st.MPI_SOURCE, st.MPI_TAG, words);
    } catch (const std::exception& e) {
      status_ = 1;
      throw std::runtime_error(fmt::format("from rank {}: {}", st.MPI_SOURCE, e.what()));
    }
  }
  bool all_totals = true;
  for (int r = 0; r < c_.size; ++r) {
    const auto i = static_cast<size_t>(r);
    all_totals = all_totals && (shared_.has_totals[i] || done_[i]);
  }
  if (all_totals && cluster_->reducer().Complete()) {
    std::lock_guard lock(shared_.mu);
    if (!shared_.cluster_ready) {
      shared_.cluster_ready = true;
      shared_.cv.notify_all();
    }
  }
  return progress;
}

void Exchange::CheckSilence() {
  // Before every rank has started, --setup_timeout watches them.
  if (started_ == 0 || started_ < ready_ranks_.size()) return;
  const auto now = Clock::now();
  bool over = false;
  {
    std::lock_guard lock(shared_.mu);
    over = shared_.has_totals[0];
  }
  for (int r = 1; r < c_.size; ++r) {
    const auto i = static_cast<size_t>(r);
    if (done_[i] || shared_.has_totals[i]) continue;
    const auto silent = now - heard_[i];
    const double silent_s = std::chrono::duration<double>(silent).count();
    if (silent > SilenceWarning(period_ms_) && !warned_[i]) {
      warned_[i] = true;
      std::cerr << fmt::format(
          "iotail-mpi: warning: rank {} ({}) has sent nothing for {:.1f} s (its intervals are due "
          "every {} ms): stopped, hung or unreachable; the cluster's intervals wait for it, and "
          "once the run is over the job ends without it after {:.0f} s of silence\n",
          r, c_.Name(r), silent_s, period_ms_,
          std::chrono::duration<double>(SilenceGrace(period_ms_)).count());
    }
    if (over && silent > SilenceGrace(period_ms_)) {
      std::cerr << fmt::format(
          "iotail-mpi: rank {} ({}) sent nothing for {:.1f} s: ending the job without it (the "
          "summary holds the other ranks' measurements)\n",
          r, c_.Name(r), silent_s);
      done_[i] = true;
      cluster_->RankDone(r);
      std::lock_guard lock(shared_.mu);
      shared_.lost_silence_s[i] = silent_s;
    }
  }
}

void Exchange::TestSends() {
  for (size_t i = 0; i < sends_.size();) {
    int flag = 0;
    MPI_Test(&sends_[i].first, &flag, MPI_STATUS_IGNORE);
    if (flag) {
      sends_[i] = std::move(sends_.back());
      sends_.pop_back();
    } else {
      ++i;
    }
  }
}

}  // namespace iotail::mpi
