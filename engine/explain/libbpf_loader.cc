#include "engine/explain/libbpf_loader.h"

#if IOTAIL_HAVE_EXPLAIN
#include <dlfcn.h>
#include <fmt/format.h>

#include <stdexcept>
#include <type_traits>

namespace iotail::engine {
namespace {

constexpr const char* kLibbpf = "libbpf.so.1";

LibBpf LoadLibbpf() {
  void* library = ::dlopen(kLibbpf, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    throw std::runtime_error(fmt::format("--explain needs {} (Debian package libbpf1): {}", kLibbpf,
                                         why ? why : "not found"));
  }
  // Kept loaded for the life of the process: programs and ring buffers may outlive any one user.
  auto find = [&](auto& function, const char* name) {
    void* symbol = ::dlsym(library, name);
    if (symbol == nullptr) {
      throw std::runtime_error(fmt::format("{} has no {}: too old a libbpf?", kLibbpf, name));
    }
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(symbol);
  };
  LibBpf l{};
  find(l.object_open_skeleton, "bpf_object__open_skeleton");
  find(l.object_load_skeleton, "bpf_object__load_skeleton");
  find(l.object_attach_skeleton, "bpf_object__attach_skeleton");
  find(l.object_detach_skeleton, "bpf_object__detach_skeleton");
  find(l.object_destroy_skeleton, "bpf_object__destroy_skeleton");
  find(l.program_set_autoload, "bpf_program__set_autoload");
  find(l.program_autoload, "bpf_program__autoload");
  find(l.program_attach, "bpf_program__attach");
  find(l.program_name, "bpf_program__name");
  find(l.program_fd, "bpf_program__fd");
  find(l.obj_get_info_by_fd, "bpf_obj_get_info_by_fd");
  find(l.map_set_max_entries, "bpf_map__set_max_entries");
  find(l.map_fd, "bpf_map__fd");
  find(l.map_update_elem, "bpf_map_update_elem");
  find(l.set_print, "libbpf_set_print");
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
