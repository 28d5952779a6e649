// BufferContent: what fio writes into a buffer (fio's fill_io_buffer), for the writes and for
// laying files out: with buffer_compress_percentage=N, each chunk of buffer_compress_chunk bytes is
// (100 - N)% random data then N% of the buffer_pattern (zeros without one), so that compressing it
// saves about N%; else the buffer_pattern repeated; else zeros (zero_buffers); else random data.
// A value type; Fill never allocates (the worker refills buffers with it on the I/O path).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace iotail::engine {

class FastRandom;

// fio's dedupe options (engine/dedupe.h).
struct DedupeSpec {
  uint32_t percentage = 0;              // 0: no dedupe
  bool working_set = false;             // dedupe_mode=working_set (else repeat)
  uint32_t working_set_percentage = 5;  // of the job's size
  bool global = false;                  // dedupe_global: one working set for every job
};

struct BufferContent {
  uint32_t compress_percentage = 0;  // 0: none; 100 is zero_buffers (or the pattern)
  uint32_t compress_chunk = 512;     // bytes per random-then-compressible chunk
  std::string pattern;               // buffer_pattern's bytes ("" = none)
  bool zeros = false;                // zero_buffers

  // Whether every fill gives the same bytes (no random part).
  bool Fixed() const { return compress_percentage == 0 && (zeros || !pattern.empty()); }
  // Fills buf[0, len) (random parts from rng).
  void Fill(char* buf, size_t len, FastRandom& rng) const;
};

// What a job's writes carry (JobSpec::buffers): --zero_buffers (write zeros; default random
// data), --refill_buffers (new random data for every write), --buffer_compress_percentage/_chunk
// and --buffer_pattern, and dedupe.
struct BufferOptions {
  bool zero = false;    // --zero_buffers
  bool refill = false;  // --refill_buffers
  uint32_t compress_percentage = 0;
  uint32_t compress_chunk = 512;
  std::string pattern;
  DedupeSpec dedupe;  // --dedupe_percentage and its options (engine/dedupe.h)
  BufferContent Content() const { return {compress_percentage, compress_chunk, pattern, zero}; }
};

// fio's buffer_pattern value: "text", 0x hex digits (the bytes as written: 0xdeadbeef is de ad be
// ef) and decimal numbers (their bytes, least significant first: 256 is 00 01), one after another
// ("ok"0xdead). Throws UsageError naming `option`.
std::string ParseBufferPattern(std::string_view text, std::string_view option);

}  // namespace iotail::engine
