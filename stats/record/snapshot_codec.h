// SnapshotCodec: a flat, exact encoding of recorder snapshots (and a job's CPU and I/O-depth
// counts) as 64-bit words, for moving them between processes (iotail-mpi sends each rank's
// interval deltas and whole-run totals to rank 0). Histograms are sparse: (index, count) pairs of
// the non-zero buckets, so an interval of a few distinct latencies is a few hundred bytes; doubles
// travel as their bit patterns, so a decoded snapshot equals the encoded one bit for bit.
//
// Decode* read from `in` at `pos`, advance it, and throw std::runtime_error on input that is
// short or malformed (a bucket index out of range). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "stats/record/cpu_usage.h"
#include "stats/record/io_depths.h"
#include "stats/record/recorder.h"

namespace iotail::stats {

void Encode(const RecorderSnapshot& s, std::vector<uint64_t>& out);
void Decode(std::span<const uint64_t> in, size_t& pos, RecorderSnapshot& s);

void Encode(const CpuUsage& c, std::vector<uint64_t>& out);
void Decode(std::span<const uint64_t> in, size_t& pos, CpuUsage& c);

void Encode(const IoDepthCounts& d, std::vector<uint64_t>& out);
void Decode(std::span<const uint64_t> in, size_t& pos, IoDepthCounts& d);

// One word, checked.
uint64_t DecodeWord(std::span<const uint64_t> in, size_t& pos);

}  // namespace iotail::stats
