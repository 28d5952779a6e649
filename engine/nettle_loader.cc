#include "engine/nettle_loader.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <mutex>
#include <string>

#include "engine/shared_library.h"
#include "engine/verify.h"
#include "stats/core/errors.h"

#if IOTAIL_HAVE_NETTLE
#include <nettle/nettle-meta.h>
#endif

namespace iotail::engine {
namespace {

#if IOTAIL_HAVE_NETTLE
constexpr LibraryName kNettle{"libnettle.so.8", "libnettle8", "Nettle"};
#endif

struct ShaKind {
  VerifyKind kind;
  const char* symbol;  // Nettle's struct nettle_hash of it
};
constexpr ShaKind kShaKinds[] = {
    {VerifyKind::kSha1, "nettle_sha1"},         {VerifyKind::kSha256, "nettle_sha256"},
    {VerifyKind::kSha512, "nettle_sha512"},     {VerifyKind::kSha3_224, "nettle_sha3_224"},
    {VerifyKind::kSha3_256, "nettle_sha3_256"}, {VerifyKind::kSha3_384, "nettle_sha3_384"},
    {VerifyKind::kSha3_512, "nettle_sha3_512"},
};

// Loaded hashes, by kind's index in kShaKinds: written once, under the mutex, before any job runs.
std::array<HashFunctions, std::size(kShaKinds)> loaded{};
std::array<std::atomic<bool>, std::size(kShaKinds)> ready{};
std::mutex loading;

int IndexOf(VerifyKind kind) {
  for (size_t i = 0; i < std::size(kShaKinds); ++i) {
    if (kShaKinds[i].kind == kind) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

bool IsShaKind(VerifyKind kind) { return IndexOf(kind) >= 0; }

void LoadNettleHash(VerifyKind kind) {
  const int i = IndexOf(kind);
  if (i < 0 || ready[i].load(std::memory_order_acquire)) return;
#if IOTAIL_HAVE_NETTLE
  std::lock_guard lock(loading);
  if (ready[i].load(std::memory_order_relaxed)) return;
  const std::string needs = fmt::format("--verify={}", VerifyKindName(kind));
  const SharedLibrary<stats::UsageError> library(kNettle, needs);
  const nettle_hash* hash = nullptr;
  library.Bind(hash, kShaKinds[i].symbol);
  if (hash->context_size > kMaxHashContext) {
    throw stats::UsageError(
        fmt::format("{}: {}'s {} needs a context of {} bytes, more than iotail's {}", needs,
                    kNettle.soname, kShaKinds[i].symbol, hash->context_size, kMaxHashContext));
  }
  loaded[i] =
      HashFunctions{hash->context_size, hash->digest_size, hash->init, hash->update, hash->digest};
  ready[i].store(true, std::memory_order_release);
#else
  throw stats::UsageError(fmt::format(
      "--verify={}: this iotail was built without GNU Nettle's headers (nettle-dev), which it "
      "needs for the SHA hashes",
      VerifyKindName(kind)));
#endif
}

const HashFunctions* NettleHash(VerifyKind kind) {
  const int i = IndexOf(kind);
  if (i < 0 || !ready[i].load(std::memory_order_acquire)) return nullptr;
  return &loaded[i];
}

}  // namespace iotail::engine
