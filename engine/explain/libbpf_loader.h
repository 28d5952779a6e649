// Bpf(): the libbpf functions BlockTracer calls, looked up with dlopen("libbpf.so.1") the first
// time a run traces (engine/libnbd_loader.h's pattern): linked, libbpf and libelf would be loaded
// and relocated at every iotail command's start, and the Debian package would depend on them for
// an option few runs use. Built only with libbpf's headers (IOTAIL_HAVE_EXPLAIN). Thread-safe: the
// lookup runs once. Throws std::runtime_error naming the library and the loader's reason when it
// cannot be loaded or lacks a function.
#pragma once

#if IOTAIL_HAVE_EXPLAIN
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

namespace iotail::engine {

struct LibBpf {
  decltype(&::bpf_object__open_skeleton) object_open_skeleton;
  decltype(&::bpf_object__load_skeleton) object_load_skeleton;
  decltype(&::bpf_object__attach_skeleton) object_attach_skeleton;
  decltype(&::bpf_object__detach_skeleton) object_detach_skeleton;
  decltype(&::bpf_object__destroy_skeleton) object_destroy_skeleton;
  decltype(&::bpf_program__set_autoload) program_set_autoload;
  decltype(&::bpf_program__autoload) program_autoload;
  decltype(&::bpf_program__attach) program_attach;
  decltype(&::bpf_program__name) program_name;
  decltype(&::bpf_program__fd) program_fd;
  decltype(&::bpf_obj_get_info_by_fd) obj_get_info_by_fd;
  decltype(&::bpf_map__set_max_entries) map_set_max_entries;
  decltype(&::bpf_map__fd) map_fd;
  decltype(&::bpf_map_update_elem) map_update_elem;
  decltype(&::libbpf_set_print) set_print;
};

const LibBpf& Bpf();

}  // namespace iotail::engine
#endif
