#include "pipelines/ocr/ctc.h"

#include <algorithm>
#include <fstream>

#include "edgemm/pipelines/ocr_metrics.h"

namespace edgemm::ocr {

Expected<std::vector<std::string>> load_ctc_dictionary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(StatusCode::kIo, "cannot open dictionary '" + path + "'");
  std::vector<std::string> table = {""};  // the CTC blank
  std::string line;
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    Expected<std::u32string> code_points = utf8_to_u32(line);
    if (!code_points) {
      return make_error(StatusCode::kInvalidArgument, "dictionary '" + path + "' line " + std::to_string(line_number) +
                                                          ": " + code_points.status().message());
    }
    if (code_points->size() != 1) {
      return make_error(StatusCode::kInvalidArgument, "dictionary '" + path + "' line " + std::to_string(line_number) +
                                                          " holds " + std::to_string(code_points->size()) +
                                                          " characters, expected exactly one");
    }
    table.push_back(line);
  }
  if (in.bad()) return make_error(StatusCode::kIo, "failed reading dictionary '" + path + "'");
  if (line_number == 0) return make_error(StatusCode::kInvalidArgument, "dictionary '" + path + "' is empty");
  table.push_back(" ");  // use_space_char=True
  return table;
}

Expected<CtcLine> ctc_greedy_decode(const float* probs, int64_t steps, int64_t classes,
                                    const std::vector<std::string>& table, float space_threshold) {
  if (table.empty()) return make_error(StatusCode::kInvalidArgument, "the CTC class table is empty");
  if (classes != static_cast<int64_t>(table.size())) {
    return make_error(StatusCode::kInvalidArgument, "CTC output has " + std::to_string(classes) +
                                                        " classes but the dictionary table has " +
                                                        std::to_string(table.size()) + " entries");
  }
  if (steps < 0) {
    return make_error(StatusCode::kInvalidArgument, "CTC output has a negative step count " + std::to_string(steps));
  }
  const int64_t space = table.back() == " " ? classes - 1 : -1;
  // A one-byte (ASCII) class other than the blank and the space: where words are spaced.
  auto is_ascii_char = [&](int64_t c) { return c > 0 && c != space && table[c].size() == 1; };
  CtcLine line;
  double kept_sum = 0;
  int64_t kept = 0;
  int64_t previous = -1;
  int64_t last_kept = -1;
  float space_evidence = 0;  // the largest space probability on blank steps since last_kept
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = probs + t * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (row[c] > row[best]) best = c;
    }
    if (best == 0 && space >= 0) space_evidence = std::max(space_evidence, row[space]);
    if (best != 0 && best != previous) {
      if (is_ascii_char(best) && is_ascii_char(last_kept) && space_evidence >= space_threshold) line.text += " ";
      line.text += table[best];
      kept_sum += row[best];
      ++kept;
      last_kept = best;
      space_evidence = 0;
    }
    previous = best;
  }
  line.score = kept > 0 ? static_cast<float>(kept_sum / kept) : 0.0f;
  return line;
}

Expected<CtcLine> ctc_greedy_decode(const Tensor& probs, int64_t batch, const std::vector<std::string>& table,
                                    float space_threshold) {
  if (probs.dtype() != DataType::kFloat32 || probs.rank() != 3) {
    return make_error(StatusCode::kInvalidArgument, std::string("CTC output must be float32 [N, T, C], got ") +
                                                        dtype_name(probs.dtype()) + " " +
                                                        shape_to_string(probs.shape()));
  }
  if (batch < 0 || batch >= probs.dim(0)) {
    return make_error(StatusCode::kInvalidArgument, "CTC batch index " + std::to_string(batch) +
                                                        " is outside a batch of " + std::to_string(probs.dim(0)));
  }
  const int64_t steps = probs.dim(1);
  const int64_t classes = probs.dim(2);
  return ctc_greedy_decode(probs.data<float>() + batch * steps * classes, steps, classes, table, space_threshold);
}

}  // namespace edgemm::ocr
