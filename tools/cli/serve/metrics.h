#pragma once
/// \file metrics.h
/// The server's counters for `GET /metrics`, in Prometheus' text exposition format 0.0.4:
/// requests by endpoint and status, latency histograms by endpoint, generated and prompt tokens,
/// the last generation's decode rate, queue depth and running requests per model, and the
/// process's resident memory.

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace edgemm::cli::serve {

class Metrics {
 public:
  /// Counts one finished request: its route ("/v1/ocr"), HTTP status and duration in seconds.
  void add_request(const std::string& endpoint, int status, double seconds);
  /// Counts one generation: prompt tokens, new tokens and its decode rate (tokens/s).
  void add_generation(int64_t prompt_tokens, int64_t new_tokens, double decode_tokens_per_s);

  /// A model's load as the page is written: its name, running and waiting requests.
  struct ModelLoad {
    std::string model;
    int running = 0;
    int waiting = 0;
  };
  /// The exposition text; `ready` is 1 once every model is loaded and until draining starts.
  std::string render(const std::vector<ModelLoad>& models, bool ready) const;

  /// The upper bounds of the latency buckets, seconds.
  static const std::vector<double>& buckets();

 private:
  struct Histogram {
    std::vector<int64_t> counts;  // per bucket, not cumulative; one more for +Inf
    double sum = 0;
    int64_t count = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::string, Histogram> latency_;
  int64_t prompt_tokens_ = 0;
  int64_t new_tokens_ = 0;
  double last_tokens_per_s_ = 0;
};

}  // namespace edgemm::cli::serve
