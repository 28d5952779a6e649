// fio's verify options (engine/verify.h): the checksum kind, the pattern and interval the blocks
// are written with, when they are read back (do_verify, verify_backlog), and what a bad one
// leaves behind (verify_dump); fio's verification threads (verify_async) are accepted, and why.
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/option_values.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& VerifyRows() {
  static const std::vector<OptionDef> table = {
      Labeled(
          "KIND",
          {"verify", kText,
           [](RunOptions& o, const OptionValue& v) {
             o.spec.verify.kind = engine::ParseVerifyKind(v.text);
           },
           "crc32c|md5|crc64|crc32|crc16|crc7|xxhash|sha1|sha256|sha512|sha3-224|sha3-256|sha3-384|"
           "sha3-512|meta|pattern|null|0: checksummed blocks, checked when read (and read back; "
           "the "
           "SHAs with GNU Nettle, libnettle8); meta checks where a block belongs (and "
           "--verify_pattern), pattern only --verify_pattern (no header), null nothing",
           "0"}),
      Labeled("PATTERN",
              {"verify_pattern", kText,
               [](RunOptions& o, const OptionValue& v) {
                 o.spec.verify.pattern = engine::ParseVerifyPattern(v.text);
                 // As fio: a pattern without --verify verifies the header and the pattern (meta).
                 if (!o.Given("verify")) o.spec.verify.kind = engine::VerifyKind::kMeta;
               },
               "the blocks' data: 0xHEX, a decimal integer, \"text\", 'file' and %o (the block's "
               "offset), one after another (512 bytes at most), repeated; alone, turns on "
               "--verify=meta",
               ""}),
      {"verify_interval", kSize,
       [](RunOptions& o, const OptionValue& v) {
         if (v.number < 80 || v.number > UINT32_MAX) {
           throw UsageError(fmt::format("--verify_interval={}: at least 80 bytes, as fio", v.text));
         }
         o.spec.verify.interval = static_cast<uint32_t>(v.number);
       },
       "a verify header every N bytes of a block (one that does not divide the block size: one "
       "per block, as fio)",
       "bs"},
      {"verify_async", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.verify.async = static_cast<uint32_t>(v.number);
       },
       // fio's threads only move the check off the submitting thread: the latencies are recorded
       // before it in both, clean runs count the same, and a bad block fails the same; fio's job
       // then runs on until its thread reports (timing), iotail's stops as if it reported at once.
       "accepted: fio's verification threads; iotail checks each block on its worker as it "
       "completes (after its latency is recorded, as fio): the same latencies, counts and "
       "failures, except that fio's job runs on for some I/Os after a bad block until its "
       "thread reports it",
       "0"},
      Labeled(
          "CPUS",
          {"verify_async_cpus", kText,
           [](RunOptions&, const OptionValue& v) {
             (void)ParseCpuList(v.text, v.option, v.context);
           },
           "accepted with --verify_async (a CPU list, checked): iotail has no verification threads "
           "to pin"}),
      Row<kCount, &JobSpec::verify, &VerifyOptions::backlog>(
          "verify_backlog", "read back and check the written blocks every N completed writes", "0"),
      Row<kCount, &JobSpec::verify, &VerifyOptions::backlog_batch>(
          "verify_backlog_batch", "of the waiting blocks, check this many at a time (0: all)", "0"),
      Row<kFlag, &JobSpec::verify, &VerifyOptions::dump>(
          "verify_dump",
          "dump a bad block as read and as written (FILE.OFFSET.received/.expected)"),
      {"verify_fatal", kFlag, AcceptOnly,
       "accepted: iotail ends the job at the first bad block or interval, as fio 3.33 does with "
       "it (without it fio checks the block's other intervals and keeps only the last verdict)",
       "0"},
      Row<kFlag, &JobSpec::verify, &VerifyOptions::do_verify>(
          "do_verify", "with --verify on a write job: read every block back after", "1"),
  };
  return table;
}

}  // namespace

std::span<const OptionDef> VerifyOptionTable() { return VerifyRows(); }

}  // namespace iotail::cli
