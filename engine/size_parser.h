// SizeParser: how a job's option values read a size (fio's suffixes under the job's kb_base), for
// the engine's parsers of option syntaxes that hold sizes (zoned_abs distributions,
// cmdprio_bssplit). The CLI passes its own reading (cli/option_values.h: SizeReader); parse-time
// only.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace iotail::engine {

// Reads `text` as a size in bytes; throws stats::UsageError naming `option`.
using SizeParser = std::function<uint64_t(std::string_view text, std::string_view option)>;

}  // namespace iotail::engine
