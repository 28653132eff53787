#pragma once
/// \file speed_check.h
/// Measured choice of the nodes worth quantizing on this CPU: int8 is not always faster (on
/// AVX2 without VNNI, oneDNN 2.6's u8s8 convolutions with few channels are slower than float
/// ones once the input is quantized and the output reordered), so each quantized node is timed
/// in edgemm's runtime in both forms and kept in int8 only where it wins.

#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tools/quantize.h"
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/qdq.h"

namespace edgemm::quant {

/// Runs `float_model` and `int8_model` (the same graph before and after insert_qdq) with
/// edgemm's runtime on `feed`, `runs` profiled runs each after one warm-up, alternating, and
/// returns the median per-node time of every named plan target found in both profiles; a
/// target's int8 time includes the QuantizeLinear / DequantizeLinear nodes of its activation
/// that still run in the int8 model (those no int8 kernel absorbed).
/// Errors: those of exporting and running the models.
Expected<std::vector<NodeTiming>> time_targets(const ir::Model& float_model, const ir::Model& int8_model,
                                               const QuantPlan& plan, const Feed& feed, int threads, int runs);

/// Int8 time over float time below which a node stays int8: within 5 % (about the spread of
/// these medians on a shared machine) counts as a tie, and a tie keeps int8, since an int8 node
/// also lets its int8 neighbours exchange uint8 values (passes::chain_int8).
inline constexpr double kInt8TieRatio = 1.05;

/// Moves the targets that `timings` shows slower in int8 (int8_us >= kInt8TieRatio · float_us)
/// from plan.targets to plan.skipped, with the two times in the reason.
void keep_faster_targets(QuantPlan& plan, const std::vector<NodeTiming>& timings);

}  // namespace edgemm::quant
