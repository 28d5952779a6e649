// A run's errors as the summary reports them: fio's first error of a job (err=), errno names, and
// iotail's own "errors:" line with the count per errno. Pure functions; thread-safe.
#pragma once

#include <string>

#include "stats/record/recorder.h"

namespace iotail::stats {

// The job's first error (the smallest errno counted), 0 if none: fio's err= and JSON's error.
int FirstErrno(const RecorderSnapshot& t);
// "  errors: none" or "  errors: N EIO=n ...", with its newline.
void AppendErrorsText(std::string& out, const RecorderSnapshot& t);

}  // namespace iotail::stats
