// NUMA placement as fio's numa_cpu_nodes and numa_mem_policy, without libnuma: a node's CPUs come
// from sysfs (/sys/devices/system/node/nodeN/cpulist), the memory policy is set with
// set_mempolicy(2) on the worker's thread before it allocates its buffers.
// NumaCpus() throws UsageError naming --numa_cpu_nodes for a node this machine does not have;
// ApplyNumaMemPolicy() throws UsageError naming --numa_mem_policy for a missing node and
// std::system_error when the kernel refuses the policy. Thread-safe (reads sysfs).
#pragma once

#include <vector>

namespace iotail::engine {

// A list of nodes as fio takes it: numbers and A-B ranges, or all (every online node).
struct NumaNodes {
  std::vector<int> nodes;
  bool all = false;
  bool Given() const { return all || !nodes.empty(); }
};

// fio's numa_mem_policy modes, valued as set_mempolicy's (MPOL_*).
enum class NumaMemMode {
  kUnset = -1,
  kDefault = 0,
  kPrefer = 1,
  kBind = 2,
  kInterleave = 3,
  kLocal = 4
};

struct NumaMemPolicy {
  NumaMemMode mode = NumaMemMode::kUnset;
  NumaNodes nodes;
};

// The CPUs of `nodes`, ascending.
std::vector<int> NumaCpus(const NumaNodes& nodes);
// Sets the calling thread's memory policy (nothing when unset).
void ApplyNumaMemPolicy(const NumaMemPolicy& policy);

}  // namespace iotail::engine
