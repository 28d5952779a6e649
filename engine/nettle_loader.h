// NettleHash(kind): the hash of fio's verify=sha1, sha256, sha512 and sha3-224/256/384/512, from
// GNU Nettle (libnettle.so.8, Debian package libnettle8), looked up with dlopen the first time a
// job names one: linked, one more library would make every iotail command start later (see
// engine/shared_library.h), and few runs verify with a SHA. Built with Nettle's headers only
// (IOTAIL_HAVE_NETTLE). LoadNettleHash throws stats::UsageError naming --verify and the reason when
// the library or the hash is not there; NettleHash then returns the loaded hash without a lock or
// a system call (for the I/O path), nullptr for a kind never loaded. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iotail::engine {

enum class VerifyKind : uint8_t;

// A hash's size and functions, as Nettle's struct nettle_hash holds them.
struct HashFunctions {
  unsigned context_size;
  unsigned digest_size;
  void (*init)(void* ctx);
  void (*update)(void* ctx, size_t length, const uint8_t* data);
  void (*digest)(void* ctx, size_t length, uint8_t* out);
};

// The largest context of the hashes above (SHA3's state and buffer are about 350 bytes).
inline constexpr size_t kMaxHashContext = 512;

// Whether `kind` is one of the SHA kinds this file serves.
bool IsShaKind(VerifyKind kind);
void LoadNettleHash(VerifyKind kind);
const HashFunctions* NettleHash(VerifyKind kind);

}  // namespace iotail::engine
