#include "engine/explain/trace_programs.h"

#if IOTAIL_HAVE_EXPLAIN
#include <fmt/format.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <vector>

#include "engine/explain/libbpf_loader.h"
#include "engine/explain/tracepoint_format.h"

// The skeletons' inline functions call these libbpf functions; route them to the library loaded
// with dlopen (nothing of libbpf is linked), in this file only.
#define bpf_object__open_skeleton(s, opts) ::iotail::engine::Bpf().object_open_skeleton(s, opts)
#define bpf_object__load_skeleton(s) ::iotail::engine::Bpf().object_load_skeleton(s)
#define bpf_object__attach_skeleton(s) ::iotail::engine::Bpf().object_attach_skeleton(s)
#define bpf_object__detach_skeleton(s) ::iotail::engine::Bpf().object_detach_skeleton(s)
#define bpf_object__destroy_skeleton(s) ::iotail::engine::Bpf().object_destroy_skeleton(s)
#include "block_trace_btf.skel.h"
#include "block_trace_tp.skel.h"
#undef bpf_object__open_skeleton
#undef bpf_object__load_skeleton
#undef bpf_object__attach_skeleton
#undef bpf_object__detach_skeleton
#undef bpf_object__destroy_skeleton

namespace iotail::engine {
namespace {

using Cause = TracerUnavailable::Cause;

// libbpf's warnings while a load runs, so that a refusal names the kernel's reason (libbpf prints
// to stderr by default). libbpf's print hook is process-wide: one capture at a time.
std::mutex capture_mutex;
std::string* capture_text = nullptr;

int CapturePrint(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG || capture_text == nullptr) return 0;
  char line[512];
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  if (n > 0) capture_text->append(line);
  return n;
}

class PrintCapture {
 public:
  PrintCapture() : lock_(capture_mutex) {
    capture_text = &text_;
    previous_ = Bpf().set_print(&CapturePrint);
  }
  ~PrintCapture() {
    Bpf().set_print(previous_);
    capture_text = nullptr;
  }
  // The last lines libbpf printed (the verifier's verdict comes last), on one line.
  std::string Tail() const {
    std::vector<std::string_view> lines;
    std::string_view rest = text_;
    while (!rest.empty()) {
      const size_t eol = rest.find('\n');
      const std::string_view line = rest.substr(0, eol);
      if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    }
    std::string tail;
    for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i) {
      tail += tail.empty() ? "" : " | ";
      tail += lines[i];
    }
    return tail.empty() ? "" : " (libbpf: " + tail + ")";
  }

 private:
  std::lock_guard<std::mutex> lock_;
  std::string text_;
  libbpf_print_fn_t previous_ = nullptr;
};

// EACCES is also the verifier's refusal of a program (the rights were checked before loading):
// a refusal, after which the plain tracepoints are tried.
Cause CauseOf(int error) {
  if (error == EPERM) return Cause::kNoRights;
  if (error == ENOENT) return Cause::kNoTracepoint;
  return Cause::kRefused;
}

template <typename Skeleton>
class LoadedPrograms : public TracePrograms {
 public:
  explicit LoadedPrograms(Skeleton* skeleton) : skeleton_(skeleton) {}
  ~LoadedPrograms() override { Skeleton::destroy(skeleton_); }
  LoadedPrograms(const LoadedPrograms&) = delete;
  LoadedPrograms& operator=(const LoadedPrograms&) = delete;

  Skeleton* skeleton() const { return skeleton_; }
  int EventsFd() const override { return Bpf().map_fd(skeleton_->maps.events); }
  int RequestsFd() const override { return Bpf().map_fd(skeleton_->maps.requests); }
  const iotail_trace_counters* Counters() const override { return skeleton_->bss->counters; }
  uint64_t Missed() const override {
    const auto& p = skeleton_->progs;
    const auto& l = skeleton_->links;
    const std::pair<bpf_program*, bpf_link*> attached[] = {
        {p.block_insert, l.block_insert},   {p.block_issue, l.block_issue},
        {p.block_requeue, l.block_requeue}, {p.block_complete, l.block_complete},
        {p.uring_submit, l.uring_submit},   {p.uring_complete, l.uring_complete}};
    uint64_t missed = 0;
    for (const auto& [program, link] : attached) {
      bpf_prog_info info{};
      uint32_t length = sizeof(info);
      if (link != nullptr &&
          Bpf().obj_get_info_by_fd(Bpf().program_fd(program), &info, &length) == 0) {
        missed += info.recursion_misses;
      }
    }
    return missed;
  }

  // Sets what both objects share, before loading.
  void Configure(const TraceSetup& setup) {
    const LibBpf& bpf = Bpf();
    skeleton_->rodata->target_tgid = setup.tgid;
    skeleton_->rodata->wakeup_bytes = setup.ring_bytes / 4;
    if (setup.kernel_devices.size() <= IOTAIL_DEVICE_LIST) {
      skeleton_->rodata->device_count = static_cast<uint32_t>(setup.kernel_devices.size());
      for (size_t i = 0; i < setup.kernel_devices.size(); ++i) {
        skeleton_->rodata->device_list[i] = setup.kernel_devices[i];
      }
    }
    const auto devices = static_cast<uint32_t>(std::max<size_t>(setup.kernel_devices.size(), 1));
    Check(bpf.map_set_max_entries(skeleton_->maps.devices, devices), "sizing the device map");
    Check(bpf.map_set_max_entries(skeleton_->maps.events, static_cast<uint32_t>(setup.ring_bytes)),
          "sizing the ring buffer");
    Check(bpf.map_set_max_entries(skeleton_->maps.requests, setup.request_entries),
          "sizing the request table");
    skeleton_->rodata->request_mask = setup.request_entries - 1;
    if constexpr (std::is_same_v<Skeleton, block_trace_btf>) {
      skeleton_->rodata->use_alloc_time = setup.typed_insert ? 0 : 1;
      if (!setup.typed_insert) {
        Check(bpf.program_set_autoload(skeleton_->progs.block_insert, false), "the insert program");
      }
    }
    if (setup.tgid == 0) {
      Check(bpf.program_set_autoload(skeleton_->progs.uring_submit, false), "io_uring programs");
      Check(bpf.program_set_autoload(skeleton_->progs.uring_complete, false), "io_uring programs");
    }
  }

  // Loads the programs, fills the device map and attaches each program.
  void LoadAndAttach(const TraceSetup& setup, const PrintCapture& capture, const char* what) {
    const LibBpf& bpf = Bpf();
    if (const int error = Skeleton::load(skeleton_); error != 0) {
      throw TraceLoadError(CauseOf(-error), fmt::format("the kernel refused the {}: {}{}", what,
                                                        std::strerror(-error), capture.Tail()));
    }
    const int devices_fd = bpf.map_fd(skeleton_->maps.devices);
    for (const uint32_t dev : setup.kernel_devices) {
      const uint8_t one = 1;
      Check(bpf.map_update_elem(devices_fd, &dev, &one, BPF_ANY), "filling the device map");
    }
    // Configure decided which programs load (the io_uring ones, the typed insert): the others.
    auto attach = [&](bpf_program* program, bpf_link** link) {
      if (!bpf.program_autoload(program)) return;
      *link = bpf.program_attach(program);
      if (*link == nullptr) {
        const int error = errno;
        throw TraceLoadError(CauseOf(error),
                             fmt::format("cannot attach {} ({}): {}{}", bpf.program_name(program),
                                         what, std::strerror(error), capture.Tail()));
      }
    };
    attach(skeleton_->progs.block_insert, &skeleton_->links.block_insert);
    attach(skeleton_->progs.block_issue, &skeleton_->links.block_issue);
    attach(skeleton_->progs.block_requeue, &skeleton_->links.block_requeue);
    attach(skeleton_->progs.block_complete, &skeleton_->links.block_complete);
    attach(skeleton_->progs.uring_submit, &skeleton_->links.uring_submit);
    attach(skeleton_->progs.uring_complete, &skeleton_->links.uring_complete);
  }

 private:
  static void Check(int error, const char* what) {
    if (error != 0) {
      const int e = error < 0 ? -error : error;
      throw TraceLoadError(CauseOf(e), fmt::format("{}: {}", what, std::strerror(e)));
    }
  }

  Skeleton* skeleton_;
};

template <typename Skeleton>
std::unique_ptr<LoadedPrograms<Skeleton>> Open(const char* what) {
  Skeleton* skeleton = Skeleton::open();
  if (skeleton == nullptr) {
    const int error = errno;
    throw TraceLoadError(Cause::kRefused,
                         fmt::format("cannot open the {}: {}", what, std::strerror(error)));
  }
  return std::make_unique<LoadedPrograms<Skeleton>>(skeleton);
}

// The offset of GROUP/NAME's field, checked to have the size the programs read.
uint32_t Offset(const std::vector<TracepointField>& fields, const char* tracepoint,
                const char* name, uint32_t size, bool at_least = false) {
  const auto field = FindField(fields, name);
  if (!field || (at_least ? field->size < size : field->size != size)) {
    throw TraceLoadError(
        Cause::kNoTracepoint,
        fmt::format("the tracepoint {} has no field {} of {} bytes", tracepoint, name, size));
  }
  return field->offset;
}

std::vector<TracepointField> Format(const char* group, const char* name) {
  try {
    return ReadTracepointFormat(group, name);
  } catch (const std::runtime_error& e) {
    throw TraceLoadError(Cause::kNoTracepoint, e.what());
  }
}

}  // namespace

std::unique_ptr<TracePrograms> LoadTypedPrograms(const TraceSetup& setup) {
  constexpr const char* kWhat = "typed raw tracepoints";
  PrintCapture capture;
  auto programs = Open<block_trace_btf>(kWhat);
  programs->Configure(setup);
  programs->LoadAndAttach(setup, capture, kWhat);
  return programs;
}

std::unique_ptr<TracePrograms> LoadTracepointPrograms(const TraceSetup& setup) {
  constexpr const char* kWhat = "tracepoints";
  PrintCapture capture;
  auto programs = Open<block_trace_tp>(kWhat);
  programs->Configure(setup);
  auto& layout = programs->skeleton()->rodata->layout;
  const auto insert = Format("block", "block_rq_insert");
  layout.insert_dev = Offset(insert, "block_rq_insert", "dev", 4);
  layout.insert_sector = Offset(insert, "block_rq_insert", "sector", 8);
  const auto issue = Format("block", "block_rq_issue");
  layout.issue_dev = Offset(issue, "block_rq_issue", "dev", 4);
  layout.issue_sector = Offset(issue, "block_rq_issue", "sector", 8);
  const auto requeue = Format("block", "block_rq_requeue");
  layout.requeue_dev = Offset(requeue, "block_rq_requeue", "dev", 4);
  layout.requeue_sector = Offset(requeue, "block_rq_requeue", "sector", 8);
  const auto complete = Format("block", "block_rq_complete");
  layout.complete_dev = Offset(complete, "block_rq_complete", "dev", 4);
  layout.complete_sector = Offset(complete, "block_rq_complete", "sector", 8);
  layout.complete_nr_sector = Offset(complete, "block_rq_complete", "nr_sector", 4);
  layout.complete_error = Offset(complete, "block_rq_complete", "error", 4);
  layout.complete_rwbs = Offset(complete, "block_rq_complete", "rwbs", 8, true);
  if (setup.tgid != 0) {
    const auto submit = Format("io_uring", "io_uring_submit_req");
    layout.submit_ctx = Offset(submit, "io_uring_submit_req", "ctx", 8);
    layout.submit_user_data = Offset(submit, "io_uring_submit_req", "user_data", 8);
    layout.submit_opcode = Offset(submit, "io_uring_submit_req", "opcode", 1);
    const auto cqe = Format("io_uring", "io_uring_complete");
    layout.cqe_ctx = Offset(cqe, "io_uring_complete", "ctx", 8);
    layout.cqe_user_data = Offset(cqe, "io_uring_complete", "user_data", 8);
    layout.cqe_res = Offset(cqe, "io_uring_complete", "res", 4);
  }
  programs->LoadAndAttach(setup, capture, kWhat);
  return programs;
}

}  // namespace iotail::engine
#endif
