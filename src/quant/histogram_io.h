#pragma once
/// \file histogram_io.h
/// Saving and loading calibration histograms (observer.h), so that one calibration run serves
/// several methods or experiments (`edgemm quantize --save-histograms` / `--histograms`).
///
/// The file is JSON: {"format": "edgemm-histograms", "version": 1, "tensors": {NAME: {"lo",
/// "bin_width", "min", "max", "non_finite", "bins": [counts...]}}}, the state TensorHistogram's
/// accessors give; loading restores them exactly (TensorHistogram::restore).

#include <map>
#include <string>

#include "edgemm/status.h"
#include "quant/observer.h"

namespace edgemm::quant {

/// Writes `histograms` (tensor name → histogram) to `path`, whole or not at all
/// (edgemm/atomic_file.h). Errors: kIo when it cannot be written.
Status write_histograms(const std::string& path, const std::map<std::string, TensorHistogram>& histograms);

/// Reads a file write_histograms() wrote. Errors: kIo when it cannot be read; kInvalidArgument
/// when it is not such a file or a histogram's state is inconsistent (the message names the tensor).
Expected<std::map<std::string, TensorHistogram>> read_histograms(const std::string& path);

}  // namespace edgemm::quant
