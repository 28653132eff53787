#pragma once
/// \file cli_common.h
/// Helpers shared by the `edgemm` subcommands: argument parsing of shapes and name=value
/// pairs, error printing with exit codes, and tensor summaries.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::cli {

/// Parses "name=1,3,640,640" into (name, shape). Errors: kInvalidArgument.
Expected<std::pair<std::string, Shape>> parse_named_shape(const std::string& text);
/// Parses a list of "name=dims" into a map. Errors: kInvalidArgument, also for a name given twice
/// ("<option> is given twice for '<name>'").
Expected<std::map<std::string, Shape>> parse_named_shapes(const std::vector<std::string>& texts,
                                                          const std::string& option = "--shape");
/// Splits "name=value" at the first '='. Errors: kInvalidArgument.
Expected<std::pair<std::string, std::string>> split_assignment(const std::string& text, const std::string& what);

/// Checks, before any long work, that `path` can be written (a missing file is created and
/// removed again; an existing one is left as is) and is not one of `inputs` (a report must
/// never overwrite the model it measures). Errors: kInvalidArgument for an input, an empty
/// path or "-" (standard output is not a file here), kIo naming the path and the OS error.
Status check_output_path(const std::string& path, const std::vector<std::string>& inputs);

/// Writes `text` to `path`, replacing it whole or not at all (edgemm/atomic_file.h). Errors: kIo
/// naming the path and the OS error.
Status write_text_file(const std::string& path, const std::string& text);

/// Size of the file at `path` in bytes, or -1 when it cannot be read.
int64_t file_bytes(const std::string& path);

/// Records the command line (called once by main) for reports that say how they were made.
void set_invocation(int argc, char** argv);
/// The recorded command line, arguments with spaces or quotes single-quoted.
const std::string& invocation();

/// --backend, --device, --precision and --plugin, shared by the commands that run models.
struct BackendArgs {
  std::string backend = "native";
  std::string device = "cpu";
  std::string precision = "fp32";
  std::string plugin;
  /// Adds the four options to `cmd`.
  void add_to(CLI::App* cmd);
  /// Copies them into `config`.
  void apply(InferencerConfig& config) const;
};

/// JSON of Inferencer::placement(): {"backend", "nodes": [{"node", "op_type", "backend",
/// "reason"}], "fallback_nodes": count of nodes not on the requested backend}.
nlohmann::json placement_json(const Inferencer& inferencer);

/// Shorter placement for reports covering several models: {"backend", "nodes" (count),
/// "fallback_nodes" (count), "fallbacks": [{"node", "op_type", "reason"}]}.
nlohmann::json placement_summary_json(const Inferencer& inferencer);

/// CLI11 validator for a number in [lo, hi] that also refuses NaN (CLI::Range lets NaN through,
/// since every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);

/// Most intra-op threads a command accepts (more only thrashes; thousands crash OpenMP).
inline constexpr int kMaxThreads = 256;

/// A --threads value as used: 0 (every command's "all cores") becomes the number of processors
/// OpenMP may use (omp_get_num_procs), anything else stays.
int resolve_threads(int threads);

/// JSON text indented by 2; strings that are not valid UTF-8 (e.g. Latin-1 file names) get
/// U+FFFD for the invalid bytes instead of throwing.
std::string json_text(const nlohmann::json& j);

/// JSON {"code", "message"} of an error status, as every --json output writes errors.
nlohmann::json error_json(const Status& status);

/// Prints "edgemm <command>: error: <status>" ("edgemm: error: ..." for an empty `command`) to
/// stderr (and a JSON error object to stdout when `json`) and returns the status's exit code.
int report_error(const std::string& command, const Status& status, bool json);

/// "[1,3,?,?]" with symbols.
std::string dims_text(const std::vector<Dim>& dims, bool rank_known);
/// JSON description of a value (name, dtype, shape with symbols as strings).
nlohmann::json value_info_json(const ValueInfo& info);

/// min, max, mean, std and share of elements above `threshold` of a numeric tensor.
struct TensorStats {
  double min = 0, max = 0, mean = 0, stddev = 0, share_above = 0;
  int64_t count = 0;
};
TensorStats tensor_stats(const Tensor& t, double threshold);

/// Output file name for a tensor name: '/' and ':' replaced by '_', plus ".npy".
std::string npy_file_name(const std::string& value_name);

/// A folder of the source tree: $`env_var` when set, else `relative` to the working folder,
/// else `relative` to the source tree the binary was built in (found from /proc/self/exe as
/// <root>/build*/bin/edgemm), else <prefix>/share/edgemm/`relative` of an installed binary
/// (<prefix>/bin/edgemm; cmake/packaging.cmake installs platforms/ there). Returns the first that
/// exists, or the first candidate so the error message names a sensible path.
std::string default_repo_dir(const char* env_var, const std::string& relative);

/// The PP-OCRv4 model folder to use when --models is not given: default_repo_dir with
/// $EDGEMM_MODELS_DIR and models/ppocrv4.
std::string default_ocr_models_dir();

/// A one-line progress bar on stderr ("[#####.....] 3/7 name"), drawn only when stderr is a
/// terminal, erased when destroyed.
class ProgressBar {
 public:
  ProgressBar(std::string label, size_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  /// Shows that `done` items are finished and `current` is being worked on.
  void update(size_t done, const std::string& current);
  /// Erases the bar so that other output can be printed on a clean line.
  void clear();

 private:
  std::string label_;
  size_t total_;
  bool enabled_;
};

}  // namespace edgemm::cli
