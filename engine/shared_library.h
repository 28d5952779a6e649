// Optional libraries (libnbd, libbpf, Nettle, zlib, libzstd) loaded with dlopen the first time a
// run needs one, never linked: linked, every iotail command would load and relocate them and what
// they bring (libnbd alone made every command start about 5 ms later). A library once loaded stays
// loaded for the life of the process: the handles, callbacks and programs made with it may outlive
// any one user. Bind resolves a symbol into a typed pointer. Failures throw the caller's error type
// (constructed from a std::string) with the reason: "NEEDS needs SONAME (Debian package PACKAGE):
// WHY" and "NEEDS: SONAME has no SYMBOL: too old a NAME?". Thread-safe as dlopen and dlsym are;
// callers that cache what they bind do so once (a static local or under a mutex).
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace iotail::engine {

struct LibraryName {
  const char* soname;   // "libnbd.so.0"
  const char* package;  // Debian's package of it: "libnbd0"
  const char* name;     // as in "too old a NAME?": "libnbd"
};

// dlopen(soname, RTLD_NOW | RTLD_LOCAL): the handle, or nullptr with dlerror()'s reason in `why`.
void* OpenLibrary(const char* soname, std::string& why);
// dlsym(handle, symbol), or nullptr.
void* LibrarySymbol(void* handle, const char* symbol);
std::string LibraryMissing(const LibraryName& library, std::string_view needs,
                           std::string_view why);
std::string SymbolMissing(const LibraryName& library, std::string_view needs, const char* symbol);

template <typename Error>
class SharedLibrary {
 public:
  // Loads `library` for `needs` (who needs it, the errors' subject: "the nbd engine").
  SharedLibrary(const LibraryName& library, std::string needs)
      : library_(library), needs_(std::move(needs)) {
    std::string why;
    handle_ = OpenLibrary(library.soname, why);
    if (handle_ == nullptr) throw Error(LibraryMissing(library_, needs_, why));
  }

  // `out` = the library's `symbol` (a function, or an object of type T).
  template <typename T>
  void Bind(T*& out, const char* symbol) const {
    void* found = LibrarySymbol(handle_, symbol);
    if (found == nullptr) throw Error(SymbolMissing(library_, needs_, symbol));
    out = reinterpret_cast<T*>(found);
  }

 private:
  LibraryName library_;
  std::string needs_;
  void* handle_ = nullptr;
};

}  // namespace iotail::engine
