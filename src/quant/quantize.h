#pragma once
/// \file quantize.h
/// Post-training quantization of a float ONNX model, as `edgemm quantize` runs it
/// (docs/quantize.md), on ir::Model: what edgemm/tools/quantize.h wraps. int8 QDQ in qdq.h,
/// calibration in calibrate.h, mixed precision in sensitivity.h, the speed check in speed_check.h.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "convert/convert.h"
#include "edgemm/status.h"
#include "edgemm/tools/quantize.h"
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/observer.h"
#include "quant/qdq.h"
#include "quant/sensitivity.h"
#include "quant/speed_check.h"

namespace edgemm::quant {

/// Prepares `model` for quantization: passes::simplify-style folding (BatchNormalization into
/// Conv, constants, dead nodes) and an opset upgrade to 13 when it is older (per-axis QDQ), with
/// `probe` (input shapes of a real sample) helping the upgrade infer ranks
/// (ConvertOptions::rank_probe_shapes). Errors: those of convert::convert_model.
Status prepare_for_quantization(ir::Model& model, const std::map<std::string, Shape>& probe,
                                convert::ConvertReport& report);

/// quantize_int8 of edgemm/tools/quantize.h on an ir::Model: the same steps and errors, the report
/// filled as it goes.
Status quantize_int8(ir::Model& model, const std::vector<CalibrationSample>& samples, const FeedSource& source,
                     const Int8QuantizeOptions& options, Int8Report& report);

/// quantize_int4_weights of edgemm/tools/quantize.h on an ir::Model (MatMulNBits packed by
/// kernels::pack_matmul_nbits, scales by awq.h): the same rewrite and errors.
Status quantize_int4_weights(ir::Model& model, const Int4Options& options, Int4Report& report,
                             const std::vector<CalibrationSample>& samples = {}, const FeedSource& source = {});

/// store_weights_fp16 of edgemm/tools/quantize.h on an ir::Model.
Expected<int> store_weights_fp16(ir::Model& model, int64_t min_elements = 16);

}  // namespace edgemm::quant
