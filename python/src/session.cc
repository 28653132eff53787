/// `_Session`: an edgemm Inferencer for Python, the engine under edgemm.InferenceSession
/// (python/edgemm/session.py, which adds ONNX Runtime's surface).

#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "common.h"
#include "edgemm/inferencer.h"

namespace edgemm::python {
namespace {

/// One input or output as (name, dtype name, dims, rank known); a dim is an int, the symbol
/// (str) of a named symbolic axis, or None for an unnamed one (ONNX Runtime's NodeArg.shape).
py::tuple describe(const ValueInfo& info) {
  py::list dims;
  for (const Dim& d : info.shape) {
    if (d.is_static()) {
      dims.append(d.value);
    } else if (!d.symbol.empty()) {
      dims.append(d.symbol);
    } else {
      dims.append(py::none());
    }
  }
  return py::make_tuple(info.name, dtype_name(info.dtype), dims, info.rank_known);
}

class Session {
 public:
  /// `model` is a path (str) or the file's bytes.
  Session(const py::object& model, int threads, bool optimize, const std::string& backend,
          const std::string& plugin_path, const std::string& device, const std::string& precision,
          const std::map<std::string, Shape>& fixed_shapes, const std::string& profile_path) {
    InferencerConfig config;
    if (py::isinstance<py::bytes>(model) || py::isinstance<py::bytearray>(model)) {
      config.model_bytes = py::bytes(model);
      if (config.model_bytes.empty()) {
        throw_status(make_error(StatusCode::kInvalidModel, "the model bytes are empty"));
      }
    } else {
      config.model_path = path_string(model);
    }
    config.threads = threads;
    config.optimize = optimize;
    config.backend = backend;
    config.plugin_path = plugin_path;
    config.device = device;
    config.precision = precision;
    config.fixed_input_shapes = fixed_shapes;
    config.profile_path = profile_path;
    Expected<std::unique_ptr<Inferencer>> created = make_error(StatusCode::kInternal, "not loaded");
    {
      py::gil_scoped_release release;
      created = Inferencer::create(config);
    }
    inferencer_ = take(std::move(created));
  }

  py::list inputs() const { return describe_all(inferencer_->inputs()); }
  py::list outputs() const { return describe_all(inferencer_->outputs()); }
  std::string backend() const { return inferencer_->backend(); }

  /// Runs on `feed` (name → numpy array): the arrays of `output_names` (all outputs when None or
  /// empty), in that order. The GIL is released while the model runs.
  py::list run(const std::optional<std::vector<std::string>>& output_names, const py::dict& feed) const {
    std::vector<InputTensor> held;
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (const auto& [key, value] : feed) {
      if (!py::isinstance<py::str>(key)) {
        throw_status(
            make_error(StatusCode::kInvalidArgument,
                       "input names must be str, got " + std::string(py::str(key.get_type().attr("__name__")))));
      }
      const std::string name = py::str(key);
      held.push_back(to_tensor(value, "input '" + name + "'"));
      inputs.emplace_back(name, held.back().tensor);
    }
    const std::vector<std::string> names = output_names.value_or(std::vector<std::string>{});
    Expected<std::vector<Tensor>> outputs = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      outputs = inferencer_->run(inputs, names);
    }
    py::list result;
    std::vector<const void*> returned;  // an output asked for twice is copied the second time
    for (const Tensor& t : take(std::move(outputs))) {
      const bool again =
          t.byte_size() > 0 && std::find(returned.begin(), returned.end(), t.raw_data()) != returned.end();
      result.append(again ? py::array(to_array(t, held).attr("copy")()) : to_array(t, held));
      returned.push_back(t.raw_data());
    }
    return result;
  }

  /// Memory of the loaded model, in bytes (edgemm::MemoryReport).
  py::dict memory() const {
    const MemoryReport m = inferencer_->memory_report();
    py::dict d;
    d["weight_bytes"] = m.weight_bytes;
    d["packed_weight_bytes"] = m.packed_weight_bytes;
    d["planned_peak_bytes"] = m.planned_peak_bytes;
    d["unplanned_bytes"] = m.unplanned_bytes;
    return d;
  }

  /// (node, op_type, backend, reason) of every node (Inferencer::placement).
  py::list placement() const {
    py::list out;
    for (const NodePlacement& p : inferencer_->placement()) {
      out.append(py::make_tuple(p.node, p.op_type, p.backend, p.reason));
    }
    return out;
  }

 private:
  static py::list describe_all(const std::vector<ValueInfo>& infos) {
    py::list out;
    for (const ValueInfo& info : infos) out.append(describe(info));
    return out;
  }

  std::unique_ptr<Inferencer> inferencer_;
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<Session>(m, "_Session", "An edgemm Inferencer (edgemm/inferencer.h); see edgemm.InferenceSession.")
      .def(py::init<const py::object&, int, bool, const std::string&, const std::string&, const std::string&,
                    const std::string&, const std::map<std::string, Shape>&, const std::string&>(),
           py::arg("model"), py::arg("threads") = 0, py::arg("optimize") = true, py::arg("backend") = "native",
           py::arg("plugin_path") = "", py::arg("device") = "cpu", py::arg("precision") = "fp32",
           py::arg("fixed_shapes") = std::map<std::string, Shape>{}, py::arg("profile_path") = "")
      .def("inputs", &Session::inputs)
      .def("outputs", &Session::outputs)
      .def("backend", &Session::backend)
      .def("run", &Session::run, py::arg("output_names"), py::arg("feed"))
      .def("memory", &Session::memory)
      .def("placement", &Session::placement);
}

}  // namespace edgemm::python
