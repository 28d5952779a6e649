// BlktraceReader: a blktrace binary dump (`blkparse -i NAME -d FILE`, or one per-CPU file of
// `blktrace -d DEV`) read as the I/Os fio's `read_iolog` replays from it.
//
// Contract (fio 3.33's blktrace.c is the reference for what is an I/O):
// - Records are `struct blk_io_trace` (48 bytes, version 7) each followed by `pdu_len` bytes of
//   payload, which are skipped. The first record's magic decides the byte order for the whole
//   file, as blkparse and fio do: native, or byte-swapped (a dump made on a machine of the other
//   endianness). A bad magic, another version, or a record or payload cut short throws
//   TraceFormatError naming the file and the record's byte offset.
// - I/Os are the queue (Q) events that are not notifications: a discard is a trim, a flush a sync
//   (no offset or length, as fio), otherwise a write if the write category is set, else a read.
//   A zero-length read or write is not an I/O (fio warns and drops it). Every other record
//   (notifications, G, I, D, C, merges, plugs, remaps...) is counted in `skipped()`.
// - Times: fio waits, before each Q, the time since the previous Q (0 if the clock went back);
//   `time_ns` is that schedule in nanoseconds, the sum of those waits: 0 for the first Q and never
//   decreasing. Every Q moves the clock, dropped zero-length ones included (as fio). One fio
//   quirk is not copied: fio 3.33 also waits 0 before the second Q when the first is at time 0,
//   which it is in every `blkparse -d` dump (blkparse starts the times at 0), so fio loses the
//   first gap (measured: Qs at 0, 0.3 and 0.6 s replay in 0.69 s under fio 3.33, in 1.01 s when
//   the first Q is at 1 ns).
// - Offsets are `sector * 512` bytes, lengths the record's bytes. `device` indexes `devices()`,
//   the dev_t of each Q's record as "MAJOR,MINOR" (MAJOR = dev >> 20), in order of first Q.
// - `recorded_ns`: when the dump holds the request's dispatch (D) and completion (C), C's time
//   minus D's. A D takes each Q of its device, class (read, write, trim, flush) and sector range
//   [sector, sector + bytes/512) that has no D yet (so merged bios share their request's time);
//   the C at the D's device and sector ends it. A Q whose request was not seen keeps 0.
// - Bounded memory: at most `kBlktraceMatchWindow` (16,384) Qs are held waiting for their D and
//   C: a ring slot each and a map node (of the Q waiting for its D, or of its request in flight),
//   2.2 MB of heap measured with the window full of requests that never complete, whatever the
//   trace's length; plus a 64 KiB read buffer. When the window is full the oldest Q is given out
//   with what is known (recorded_ns 0 if its C has not come) and counted in `unmatched`; so is a
//   Q whose D or C never comes (a stacked device's bio remapped elsewhere, a trace stopped early),
//   at the latest when the window fills or the trace ends. Events are given out in trace order.
// Not thread-safe: one reader per replaying thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/replay/trace_event.h"

namespace iotail::engine::replay {

// The most Qs a BlktraceReader holds waiting for their dispatch and completion.
inline constexpr size_t kBlktraceMatchWindow = 16384;
// The size of a blk_io_trace record before its payload.
inline constexpr size_t kBlktraceRecordBytes = 48;

// Whether `head` (a file's first bytes, at least 4) starts with a blktrace record's magic in
// either byte order: how a format detector tells a blktrace dump.
bool LooksLikeBlktrace(std::string_view head);

// The reader over `source` (the window: `window` Qs, kBlktraceMatchWindow unless a test asks for
// less). Reads nothing until the first Next.
std::unique_ptr<TraceReader> MakeBlktraceReader(std::unique_ptr<ByteSource> source,
                                                size_t window = kBlktraceMatchWindow);

// What a blktrace reader saw besides its events (for the replay's notes); `reader` must come
// from MakeBlktraceReader.
struct BlktraceCounts {
  uint64_t records = 0;    // records read
  uint64_t matched = 0;    // I/Os given out with their D-to-C time
  uint64_t unmatched = 0;  // I/Os given out without (no D or C seen, or the window was full)
};
BlktraceCounts CountsOf(const TraceReader& reader);

}  // namespace iotail::engine::replay
