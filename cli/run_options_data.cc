// fio's options for what a job's writes carry: the buffers' contents (zero_buffers, refill_buffers,
// buffer_compress_percentage/_chunk, buffer_pattern: engine/buffer_fill.h, which lays files out
// with the same contents) and checksummed blocks read back (verify, do_verify: engine/verify.h).
#include "cli/option_table.h"
#include "cli/run_options.h"

namespace iotail::cli {

namespace {

using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& Table() {
  static const std::vector<OptionDef> table = {
      {"refill_buffers", kFlag, JobField<&JobSpec::refill_buffers>,
       "new random data for every write (else each buffer's is made once)", "0"},
      {"buffer_compress_percentage", kCount, JobField<&JobSpec::buffer_compress_percentage>,
       "each chunk of a written buffer is (100 - N)% random, then N% the pattern (zeros): about N% "
       "compressible (refills buffers unless --refill_buffers=0)",
       "0", Also(), Choices(), OptionScope::kJob, 0, 100},
      {"buffer_compress_chunk", kSize, JobField<&JobSpec::buffer_compress_chunk>,
       "the chunk of --buffer_compress_percentage", "512"},
      {"buffer_pattern", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.buffer_pattern = engine::ParseBufferPattern(v.text, v.option);
       },
       "write buffers hold this pattern repeated: \"text\", 0x hex bytes, decimal numbers (LE), "
       "one after another"},
      {"zero_buffers", kFlag, JobField<&JobSpec::zero_buffers>,
       "write zeros instead of random data", "0"},
      {"verify", kText,
       [](RunOptions& o, const OptionValue& v) { o.spec.verify = engine::ParseVerifyKind(v.text); },
       "crc32c|md5|0: checksummed blocks, checked when read (and read back)", "0"},
      {"do_verify", kFlag, JobField<&JobSpec::do_verify>,
       "with --verify on a write job: read every block back after", "1"},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> DataOptionTable() { return Table(); }

}  // namespace iotail::cli
