// JobSpec::ValidateVerify (engine/job_spec.h): what a job that verifies may be, and fill_device.
#include <fmt/format.h>

#include <cstdint>

#include "engine/job_spec.h"
#include "stats/core/errors.h"

namespace iotail::engine {

using stats::UsageError;

// Validate: verify (its kinds, intervals and patterns, what a job that verifies may do) and
// fill_device.
void JobSpec::ValidateVerify() const {
  if (verify.kind == VerifyKind::kNone && (verify.backlog != 0 || verify.dump)) {
    throw UsageError(fmt::format("--{}: only with --verify",
                                 verify.backlog != 0 ? "verify_backlog" : "verify_dump"));
  }
  if (verify.kind != VerifyKind::kNone) {
    if (MinBlockSize() != MaxBlockSize()) {
      throw UsageError("--verify: needs one block size (not bsrange or bssplit)");
    }
    // fio's verify_interval: past the block size or not dividing it, the whole block.
    const uint32_t bs = MinBlockSize();
    const uint32_t step = verify.interval != 0 && verify.interval < bs && bs % verify.interval == 0
                              ? verify.interval
                              : bs;
    if (verify.kind == VerifyKind::kPattern && verify.pattern.size == 0) {
      throw UsageError("--verify=pattern: needs --verify_pattern");
    }
    if (verify.kind != VerifyKind::kPattern && step < VerifyHeaderBytes(verify.kind)) {
      throw UsageError(fmt::format(
          "--verify={}: iotail's header needs {} bytes: the block size{} must be at least that",
          VerifyKindName(verify.kind), VerifyHeaderBytes(verify.kind),
          step != bs ? " and --verify_interval" : ""));
    }
    if (ioengine == EngineKind::kNbd) throw UsageError("--verify: not with --ioengine=nbd");
    if (ioengine == EngineKind::kNull || ChangesFilesOnly()) {
      throw UsageError(fmt::format("--verify: not with --ioengine={} (it transfers no data)",
                                   EngineKindName(ioengine)));
    }
    // Without a backlog the read-back reads the whole region (a write job) or the loop's
    // written blocks (VerifiesWrittenEachLoop): either way each block must be written once a
    // loop, or (norandommap, as fio's sorted list) read back once, the last write's, which with
    // one block size is the whole block. fio's own check fails where a block is written twice
    // otherwise (its header's seed), so those jobs are refused rather than given another meaning.
    if (HasWrites() && verify.backlog == 0 && verify.do_verify && !NeverVerifies() &&
        ((IsRandom() && NoRandomMap() && HasReads()) || rw_modifier != 0 ||
         random_distribution.kind != DistributionKind::kRandom)) {
      throw UsageError(
          "--verify: the writes must cover every block once a loop (not norandommap in a mixed "
          "job, a skewed random_distribution or rw=...:N), unless --verify_backlog reads back "
          "what was written");
    }
    if (HasWrites() && verify.backlog == 0 && verify.do_verify && !NeverVerifies() && IsRandom() &&
        NoRandomMap() && (MinBlockSize() != MaxBlockSize() || BlockAlign() != MinBlockSize())) {
      throw UsageError(
          "--verify with --norandommap: one block size, aligned to itself (a block rewritten "
          "with another size or alignment would overlap the ones before; or give "
          "--verify_backlog)");
    }
    if (VerifiesWrittenEachLoop() && rates.Limited()) {
      throw UsageError(
          "--verify: a mixed or time_based job that verifies needs --verify_backlog when it is "
          "rate-limited (iotail's open loop has no read-back phase)");
    }
  }
  if (region.fill_device) {
    // fio fills the filesystem first for a read job, and a random fill has no end to reach.
    if (HasReads() || HasTrims() || IsRandom()) {
      throw UsageError(
          "--fill_device: a sequential write job only (iotail does not fill a "
          "filesystem before reading it)");
    }
    if (filenames.size() != 1 || ioengine == EngineKind::kNbd || ioengine == EngineKind::kNull) {
      throw UsageError("--fill_device: one file (or device), written through a file engine");
    }
  }
}

}  // namespace iotail::engine
