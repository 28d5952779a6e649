// A job's targets, as RunJobs (engine/job_runner.h) sets them up before the run: its files and
// devices opened (created and laid out, or safety-checked: engine/target.h), the NBD export
// probed, nothing for the null engine, and for fio's file and directory operation engines only
// what fio prepares (their files laid out, or their directories made, or nothing); then which
// files each clone does its I/O over and its region in them (fio's get_start_offset and size);
// with zonemode=zbd the files' emulated zones (engine/zoned_file.h) and each region aligned to
// them as fio aligns it. After the run, fio's unlink removes the job's files (or directories).
// Setup throws UsageError for bad settings and refusals, std::system_error for OS failures. Used
// by RunJobs alone, on its thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/job_runner.h"
#include "engine/job_spec.h"
#include "engine/target.h"
#include "engine/zoned_file.h"

namespace iotail::engine {

// The targets of a run (files and devices, or the NBD export, or nothing for the null engine) and
// what each worker's region is measured against.
struct Targets {
  std::vector<Target> files;  // empty for the nbd and null engines and the file operations
  bool nbd = false;
  // The null engine opens nothing (fio's null engine is diskless): each of its files is --size
  // bytes past the worker's offset, as fio takes it. So are the file and directory operation
  // engines' files, unless they were laid out (filestat, filedelete): their capacity is then
  // each file's size.
  bool diskless = false;
  size_t count = 0;                // files (1 for the export)
  std::vector<uint64_t> capacity;  // bytes of each file (or of the export)
  // The file and directory operation engines: no descriptor, the workers' engines get the paths.
  bool by_path = false;
  // zonemode=zbd: each file's emulated zones (shared with the other jobs on it).
  std::vector<std::shared_ptr<ZonedFile>> zones;
};

// Which files of the job worker w does its I/O over (indices into the job's file list): all of
// them, or with files_per_clone its own (fio's NAME.w.k: index k * numjobs + w).
std::vector<size_t> FilesOf(const JobSpec& spec, size_t files, uint32_t w);
// fio's get_start_offset for clone `clone` on a file of `capacity` bytes.
uint64_t CloneOffset(const JobSpec& spec, uint64_t capacity, uint32_t clone);
// Opens (creates or safety-checks) every target; with zonemode=zbd also finds (or makes, in
// `zones`) each file's emulated zones, refusing a zoned block device and a file smaller than a
// zone as fio's init_zone_info does.
Targets OpenTargets(const JobSpec& spec, JobOutcome& out, const std::atomic<bool>* stop,
                    ZoneRegistry& zones);

// Worker w's region: its offset (fio's get_start_offset on the smallest of its files), its size
// in whole minimum blocks (--size, its percentage, or what the smallest file has after the
// offset), and how far its files reach past the offset. UsageError when it holds no block.
struct Region {
  uint64_t offset = 0, size = 0, file_end = 0;
};
Region WorkerRegion(const JobSpec& spec, const Targets& targets, const std::vector<size_t>& files,
                    uint32_t w);

// fio's unlink: once the job has ended, its regular files removed (a missing one is no error),
// or with dircreate, dirstat and dirdelete its directories. Never a device.
void RemoveJobFiles(const JobSpec& spec);

}  // namespace iotail::engine
