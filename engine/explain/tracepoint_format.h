// Where a tracepoint's fields lie in its record, from the format file tracefs publishes
// (events/GROUP/NAME/format): the plain-tracepoint programs of BlockTracer read each field at the
// offset found here, so they need neither kernel BTF nor CO-RE. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iotail::engine {

struct TracepointField {
  std::string name;  // without an array's [N]
  uint32_t offset = 0;
  uint32_t size = 0;
};

// The fields of a format file's text ("field:TYPE NAME;\toffset:N;\tsize:N;..." lines); lines of
// another shape are skipped.
std::vector<TracepointField> ParseTracepointFormat(std::string_view text);

// The field named `name`, if any.
std::optional<TracepointField> FindField(const std::vector<TracepointField>& fields,
                                         std::string_view name);

// The tracefs directory libbpf attaches tracepoints through: /sys/kernel/debug/tracing when it
// exists, else /sys/kernel/tracing.
std::string TracefsDir();

// The fields of GROUP/NAME. Throws std::runtime_error naming the file when it cannot be read (no
// tracefs mounted, no such tracepoint).
std::vector<TracepointField> ReadTracepointFormat(std::string_view group, std::string_view name);

}  // namespace iotail::engine
