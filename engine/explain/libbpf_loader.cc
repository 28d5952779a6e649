#include "engine/explain/libbpf_loader.h"

#if IOTAIL_HAVE_EXPLAIN
#include <stdexcept>

#include "engine/shared_library.h"

namespace iotail::engine {
namespace {

LibBpf LoadLibbpf() {
  const SharedLibrary<std::runtime_error> library({"libbpf.so.1", "libbpf1", "libbpf"},
                                                  "--explain");
  LibBpf l{};
  library.Bind(l.object_open_skeleton, "bpf_object__open_skeleton");
  library.Bind(l.object_load_skeleton, "bpf_object__load_skeleton");
  library.Bind(l.object_attach_skeleton, "bpf_object__attach_skeleton");
  library.Bind(l.object_detach_skeleton, "bpf_object__detach_skeleton");
  library.Bind(l.object_destroy_skeleton, "bpf_object__destroy_skeleton");
  library.Bind(l.program_set_autoload, "bpf_program__set_autoload");
  library.Bind(l.program_autoload, "bpf_program__autoload");
  library.Bind(l.program_attach, "bpf_program__attach");
  library.Bind(l.program_name, "bpf_program__name");
  library.Bind(l.program_fd, "bpf_program__fd");
  library.Bind(l.obj_get_info_by_fd, "bpf_obj_get_info_by_fd");
  library.Bind(l.map_set_max_entries, "bpf_map__set_max_entries");
  library.Bind(l.map_fd, "bpf_map__fd");
  library.Bind(l.map_update_elem, "bpf_map_update_elem");
  library.Bind(l.set_print, "libbpf_set_print");
  return l;
}

}  // namespace

const LibBpf& Bpf() {
  static const LibBpf library =
      LoadLibbpf();  // a failed load throws, and the next call tries again
  return library;
}

}  // namespace iotail::engine
#endif
