#pragma once
/// \file observer.h
/// Calibration observers: streaming statistics of one float tensor over a calibration set, and
/// the calibration methods that turn them into a quantization range.
///
/// One pass over the data serves every method: TensorHistogram keeps the exact minimum and
/// maximum and a fixed-size histogram whose range doubles (merging bins pairwise, exactly) when
/// a value falls outside, so memory stays bounded (bins × 8 bytes per tensor) whatever the set
/// size. Methods (choose_range):
/// - minmax: the observed [min, max];
/// - percentile: the p-th and (100 − p)-th percentiles (bin edges), p = 99.99 by default;
/// - entropy: the clipping threshold T minimizing the KL divergence between the histogram of
///   |x| and its quantized version (Migacz, "8-bit Inference with TensorRT", GTC 2017), range
///   [max(min, −T), min(max, T)]. As NVIDIA's pytorch-quantization (calib/histogram.py) does:
///   |x| is quantized to 128 levels for symmetric int8 activations and 256 for uint8 ones, and
///   the first bin (the exact zeros of ReLU-like outputs) counts as the second, so that the
///   zero spike does not pull T down to the search's lower bound;
/// - mse: the range [min·s, max·s], s in (0, 1], minimizing the expected squared quantization
///   error of the histogram's values under uint8 affine quantization.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tools/calibration.h"  // TensorHistogram, CalibrationMethod, Range

namespace edgemm::quant {

/// The range `method` picks for `h` (see the file comment). `percentile` is p in (50, 100] for
/// kPercentile; `symmetric` says the activations are symmetric int8 (else asymmetric uint8),
/// which kEntropy uses. The result lies within [min, max]; an empty histogram gives [0, 0].
Range choose_range(const TensorHistogram& h, CalibrationMethod method, double percentile = 99.99,
                   bool symmetric = false);

/// Scale and zero point of linear quantization, q = saturate(round(x / scale) + zero_point)
/// (ONNX QuantizeLinear).
struct QuantParams {
  float scale = 1;
  int32_t zero_point = 0;
};

/// Asymmetric uint8 parameters for `r`, widened to contain 0 so that zero (padding) is exact:
/// scale = (hi − lo) / 255, zero_point = round(−lo / scale) in [0, 255]. A zero-width range
/// gives scale 1, zero point 0 (ONNX Runtime's convention).
QuantParams asymmetric_uint8(Range r);

/// Symmetric signed parameters for `r`: zero_point 0, scale = max(|lo|, |hi|) / qmax (127 for
/// int8; 64 for weights kept to 7 bits, see QuantizeOptions::reduce_range). All-zero gives scale 1.
QuantParams symmetric_int8(Range r, int qmax = 127);

}  // namespace edgemm::quant
