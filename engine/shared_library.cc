#include "engine/shared_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace iotail::engine {

void* OpenLibrary(const char* soname, std::string& why) {
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    why = error != nullptr ? error : "not found";
  }
  return handle;
}

void* LibrarySymbol(void* handle, const char* symbol) { return ::dlsym(handle, symbol); }

std::string LibraryMissing(const LibraryName& library, std::string_view needs,
                           std::string_view why) {
  return fmt::format("{} needs {} (Debian package {}): {}", needs, library.soname, library.package,
                     why);
}

std::string SymbolMissing(const LibraryName& library, std::string_view needs, const char* symbol) {
  return fmt::format("{}: {} has no {}: too old a {}?", needs, library.soname, symbol,
                     library.name);
}

}  // namespace iotail::engine
