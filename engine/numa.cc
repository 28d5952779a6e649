#include "engine/numa.h"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

// "0-3,8,10-11" (sysfs's list form) as numbers.
std::vector<int> ParseSysfsList(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(start, comma - start);
    const size_t dash = part.find('-');
    try {
      const int lo = std::stoi(part.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int i = lo; i <= hi; ++i) out.push_back(i);
    } catch (const std::exception&) {
      // a blank or malformed entry: nothing
    }
    start = comma + 1;
  }
  return out;
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<int> OnlineNodes() {
  return ParseSysfsList(ReadLine("/sys/devices/system/node/online"));
}

// The nodes a list names, each checked to exist.
std::vector<int> Resolve(const NumaNodes& nodes, const char* option) {
  const std::vector<int> online = OnlineNodes();
  if (nodes.all) return online;
  for (int n : nodes.nodes) {
    if (std::find(online.begin(), online.end(), n) == online.end()) {
      throw stats::UsageError(fmt::format("--{}: node {} is not online here (online: {})", option,
                                          n, ReadLine("/sys/devices/system/node/online")));
    }
  }
  return nodes.nodes;
}

}  // namespace

std::vector<int> NumaCpus(const NumaNodes& nodes) {
  std::vector<int> cpus;
  for (int n : Resolve(nodes, "numa_cpu_nodes")) {
    for (int c :
         ParseSysfsList(ReadLine(fmt::format("/sys/devices/system/node/node{}/cpulist", n)))) {
      cpus.push_back(c);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

void ApplyNumaMemPolicy(const NumaMemPolicy& policy) {
  if (policy.mode == NumaMemMode::kUnset) return;
  constexpr size_t kBits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(1024 / kBits, 0);
  unsigned long max_node = 0;
  if (policy.mode != NumaMemMode::kDefault && policy.mode != NumaMemMode::kLocal) {
    for (int n : Resolve(policy.nodes, "numa_mem_policy")) {
      if (n < 0 || static_cast<size_t>(n) >= mask.size() * kBits) continue;
      mask[static_cast<size_t>(n) / kBits] |= 1UL << (static_cast<size_t>(n) % kBits);
    }
    max_node = mask.size() * kBits;
  }
  const long rc = syscall(SYS_set_mempolicy, static_cast<int>(policy.mode),
                          max_node ? mask.data() : nullptr, max_node);
  if (rc != 0) {
    throw std::system_error(errno, std::generic_category(), "set_mempolicy (--numa_mem_policy)");
  }
}

}  // namespace iotail::engine
