#include "stats/analysis/aligner.h"

#include <fmt/format.h>

#include <stdexcept>

namespace iotail::stats {

int64_t InferJobStart(int64_t first_end, std::optional<int64_t> second_end,
                      std::optional<int64_t> log_hist_msec) {
  if (!IsEpochTime(first_end)) return 0;
  if (log_hist_msec) return first_end - *log_hist_msec;
  if (second_end && *second_end > first_end) return first_end - (*second_end - first_end);
  return first_end;
}

Aligner::Aligner(int64_t quantum_ms) : quantum_ms_(quantum_ms) {
  if (quantum_ms <= 0) {
    throw std::invalid_argument(fmt::format("time quantum must be positive, got {}", quantum_ms));
  }
}

int64_t Aligner::QuantumOf(int64_t t) const {
  const int64_t q = t / quantum_ms_;
  return (t % quantum_ms_ != 0 && t < 0) ? q - 1 : q;
}

int64_t Aligner::FirstQuantum(int64_t start, int64_t end) const {
  return end <= start ? LastQuantum(start, end) : QuantumOf(start);
}

int64_t Aligner::LastQuantum(int64_t /*start*/, int64_t end) const {
  // The interval is open at its start and closed at its end: end = k*Q still belongs to k-1.
  return QuantumOf(end - 1);
}

}  // namespace iotail::stats
