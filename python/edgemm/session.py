"""ONNX Runtime's InferenceSession API (onnxruntime.InferenceSession, SessionOptions, NodeArg,
GraphOptimizationLevel) over edgemm's Inferencer. What of ONNX Runtime's API is not here, and
what differs: docs/python.md "What differs from ONNX Runtime"."""

import datetime
import enum
import os
import warnings

from edgemm import _edgemm

# ONNX Runtime's execution providers (onnxruntime.get_all_providers()). A script may list one that
# edgemm does not have: it is skipped with ONNX Runtime's warning, as ONNX Runtime does when a
# provider is not in its build. Any other name is an error.
_ORT_PROVIDERS = [
    "TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider", "ROCMExecutionProvider",
    "OpenVINOExecutionProvider", "DnnlExecutionProvider", "VitisAIExecutionProvider", "QNNExecutionProvider",
    "NnapiExecutionProvider", "VSINPUExecutionProvider", "JsExecutionProvider", "CoreMLExecutionProvider",
    "ArmNNExecutionProvider", "ACLExecutionProvider", "DmlExecutionProvider", "RknpuExecutionProvider",
    "WebNNExecutionProvider", "WebGpuExecutionProvider", "XnnpackExecutionProvider", "CANNExecutionProvider",
    "AzureExecutionProvider", "CPUExecutionProvider",
]
_CPU = "CPUExecutionProvider"

# ONNX Runtime's NodeArg.type for each edgemm dtype name (edgemm/tensor.h dtype_name).
_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)"}


def get_all_providers():
    """ONNX Runtime's provider names, and edgemm's own: "native" (= CPUExecutionProvider) and
    "opencv"; a vendor plugin is named by the path of its shared library (docs/backends.md)."""
    return list(_ORT_PROVIDERS) + ["native", "opencv"]


def get_available_providers():
    """The providers this build runs: CPUExecutionProvider (edgemm's native kernels) and opencv
    (OpenCV DNN, with native for the nodes it refuses). Plugins are named by path."""
    return [_CPU, "opencv"]


def get_device():
    """"CPU", as onnxruntime.get_device() on a CPU build."""
    return "CPU"


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's levels. edgemm's graph passes are on or off: ORT_DISABLE_ALL turns them off
    (only what loading needs runs), every other level turns all of them on (docs/passes.md)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """ONNX Runtime's modes; edgemm runs nodes in order (ORT_SEQUENTIAL), each on
    intra_op_num_threads threads. ORT_PARALLEL is accepted and runs sequentially."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """ONNX Runtime's SessionOptions. Used: intra_op_num_threads (0 = all cores),
    graph_optimization_level, enable_profiling and profile_file_prefix. Accepted without effect:
    inter_op_num_threads, execution_mode, log_*, logid, enable_cpu_mem_arena, enable_mem_pattern,
    enable_mem_reuse, use_deterministic_compute (edgemm's runs are deterministic for a thread count)
    and session config entries. optimized_model_filepath is refused at session creation (use
    `edgemm convert` or `edgemm inspect --optimized`). Setting any other attribute raises
    AttributeError."""

    __slots__ = (
        "intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level", "execution_mode",
        "log_severity_level", "log_verbosity_level", "logid", "enable_profiling", "profile_file_prefix",
        "optimized_model_filepath", "enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse",
        "use_deterministic_compute", "_config", "_dim_overrides",
    )

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.optimized_model_filepath = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self._config = {}
        self._dim_overrides = {}

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes the symbolic axis `dim_name` to `dim_value` in every input. An input whose axes
        all become fixed is pinned to that shape at load, so that shape arithmetic folds
        (InferencerConfig::fixed_input_shapes); inputs with other symbolic axes left keep them all."""
        if isinstance(dim_value, bool) or not isinstance(dim_value, int) or not 1 <= dim_value < 2**62:
            raise _edgemm.InvalidArgument(f"free dimension '{dim_name}' must be an int >= 1, got {dim_value!r}")
        self._dim_overrides[str(dim_name)] = dim_value

    def add_session_config_entry(self, key, value):
        """Stored (get_session_config_entry returns it); edgemm reads none of ONNX Runtime's keys."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise RuntimeError(f"SessionOptions has no config entry '{key}'")
        return self._config[key]


class RunOptions:
    """ONNX Runtime's RunOptions, accepted by InferenceSession.run without effect."""

    __slots__ = ("log_severity_level", "log_verbosity_level", "logid", "run_tag", "terminate")

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False


class NodeArg:
    """An input or output of a model: `name`, `type` ("tensor(float)", ...) and `shape`, a list
    with an int per fixed axis, the symbol (str) of a named symbolic axis and None for an unnamed
    one; [] when the model does not declare the rank. As onnxruntime.NodeArg."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


def _node_arg(described):
    name, dtype, dims, rank_known = described
    return NodeArg(name, _TYPES.get(dtype, f"tensor({dtype})"), list(dims) if rank_known else [])


def _provider_settings(name, options):
    """(backend, plugin_path, device, precision) of one provider entry."""
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"providers must hold provider names (str), got {type(name).__name__}")
    name = _path(name, "provider")
    options = dict(options or {})
    unknown = set(options) - {"device", "precision"}
    if unknown:
        raise ValueError(
            f"provider '{name}' got options {sorted(unknown)}: edgemm's backends take only 'device' and 'precision' "
            "(docs/backends.md)"
        )
    device = str(options.get("device", "cpu"))
    precision = str(options.get("precision", "fp32"))
    if name in (_CPU, "native"):
        return ("native", "", device, precision)
    if name == "opencv":
        return ("opencv", "", device, precision)
    if name.endswith(".so") or os.sep in name:
        return ("plugin", name, device, precision)
    if name in _ORT_PROVIDERS:
        return None
    raise ValueError(
        f"unknown execution provider '{name}': edgemm runs 'CPUExecutionProvider' (or 'native'), "
        "'opencv', or a vendor plugin given by the path of its shared library"
    )


def _resolve_providers(providers, provider_options):
    """(settings of the chosen backend, provider names as get_providers reports them)."""
    if providers is None:
        providers = [_CPU]
    if isinstance(providers, (str, os.PathLike)) or not hasattr(providers, "__iter__"):
        raise TypeError("providers must be a list of provider names, e.g. ['CPUExecutionProvider']")
    providers = list(providers)
    if provider_options is not None and len(provider_options) != len(providers):
        raise ValueError("provider_options must have one dict per provider")
    chosen = None
    for i, entry in enumerate(providers):
        name, options = entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
        if provider_options is not None:
            options = provider_options[i]
        settings = _provider_settings(name, options)
        if settings is None:
            warnings.warn(
                f"Specified provider '{name}' is not in available provider names. "
                f"Available providers: '{', '.join(get_available_providers())}'",
                stacklevel=4,
            )
            continue
        if chosen is None or chosen[0] == "native":
            chosen = chosen or settings
            if chosen[0] == "native" and settings[0] != "native":
                continue  # CPU listed first: everything runs on the CPU, as ONNX Runtime would
        elif settings[0] != "native" and settings[:2] != chosen[:2]:
            raise ValueError(
                "edgemm runs one backend, with its native kernels for what that backend refuses: "
                f"got both '{chosen[1] or chosen[0]}' and '{name}'"
            )
    if chosen is None:
        chosen = ("native", "", "cpu", "fp32")
    names = [_CPU] if chosen[0] == "native" else [chosen[1] or chosen[0], _CPU]
    return chosen, names


def _path(value, what):
    """os.fspath(value) as str; refuses bytes paths and NUL characters (as open() does)."""
    path = os.fspath(value)
    if not isinstance(path, str):
        raise TypeError(f"{what} must be a str path, got {type(path).__name__}")
    if "\0" in path:
        raise ValueError(f"{what} path has an embedded null byte: {path!r}")
    return path


def _check_options(options):
    """Checks the SessionOptions edgemm uses, naming the attribute."""
    threads = options.intra_op_num_threads
    if isinstance(threads, bool) or not isinstance(threads, int) or not 0 <= threads <= 1024:
        raise _edgemm.InvalidArgument(f"SessionOptions.intra_op_num_threads must be an int in [0, 1024], got {threads!r}")
    level = options.graph_optimization_level
    if isinstance(level, bool) or not isinstance(level, int) or level not in {int(v) for v in GraphOptimizationLevel}:
        raise _edgemm.InvalidArgument(
            f"SessionOptions.graph_optimization_level must be a GraphOptimizationLevel, got {level!r}"
        )
    if not isinstance(options.enable_profiling, bool):
        raise _edgemm.InvalidArgument(f"SessionOptions.enable_profiling must be a bool, got {options.enable_profiling!r}")
    if not isinstance(options.profile_file_prefix, str):
        raise _edgemm.InvalidArgument("SessionOptions.profile_file_prefix must be a str")


class InferenceSession:
    """onnxruntime.InferenceSession over edgemm: loads the model (a path or the file's bytes),
    optimizes it, and runs it. `run` may be called from several Python threads at once; the GIL is
    released while the model runs. Errors are edgemm.Error subclasses with edgemm's message."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        unknown = set(kwargs) - {"disabled_optimizers", "read_config_from_model"}
        if unknown:
            raise TypeError(f"InferenceSession() got an unexpected keyword argument '{sorted(unknown)[0]}'")
        if kwargs.get("disabled_optimizers"):
            raise NotImplementedError(
                "edgemm cannot disable single optimizers; use GraphOptimizationLevel.ORT_DISABLE_ALL for none"
            )
        self._options = sess_options if sess_options is not None else SessionOptions()
        if not isinstance(self._options, SessionOptions):
            raise TypeError("sess_options must be an edgemm.SessionOptions")
        _check_options(self._options)
        if self._options.optimized_model_filepath:
            raise NotImplementedError(
                "edgemm does not write its optimized graph (optimized_model_filepath): "
                "`edgemm inspect --optimized` shows it, `edgemm convert --simplify` writes a simplified ONNX model"
            )
        if isinstance(path_or_bytes, (bytes, bytearray)):
            self._model = bytes(path_or_bytes)
            self._model_path = ""
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            self._model = _path(path_or_bytes, "model")
            self._model_path = self._model
        else:
            raise TypeError(f"path_or_bytes must be a path or the model's bytes, got {type(path_or_bytes).__name__}")
        self._profile_path = ""
        if self._options.enable_profiling:
            stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
            self._profile_path = f"{self._options.profile_file_prefix}{stamp}.json"
            folder = os.path.dirname(self._profile_path) or "."
            if not os.path.isdir(folder):
                raise _edgemm.IoError(f"profile_file_prefix: the folder '{folder}' does not exist")
        self._create(providers, provider_options)

    def _create(self, providers, provider_options):
        (backend, plugin_path, device, precision), self._providers = _resolve_providers(providers, provider_options)
        settings = dict(
            threads=self._options.intra_op_num_threads,
            optimize=self._options.graph_optimization_level != GraphOptimizationLevel.ORT_DISABLE_ALL,
            backend=backend,
            plugin_path=plugin_path,
            device=device,
            precision=precision,
            profile_path=self._profile_path,
        )
        self._session = _edgemm._Session(self._model, **settings)
        pinned = self._pinned_shapes()
        if pinned:  # loaded again with the shapes fixed, as ONNX Runtime applies the overrides at load
            self._session = _edgemm._Session(self._model, fixed_shapes=pinned, **settings)
        self._inputs = [_node_arg(d) for d in self._session.inputs()]
        self._outputs = [_node_arg(d) for d in self._session.outputs()]

    def _pinned_shapes(self):
        """{input: shape} for the inputs whose axes the free-dimension overrides all fix."""
        overrides = self._options._dim_overrides
        pinned = {}
        for name, _, dims, rank_known in self._session.inputs() if overrides else []:
            shape = [d if isinstance(d, int) else overrides.get(d) for d in dims]
            if rank_known and dims and any(not isinstance(d, int) for d in dims) and None not in shape:
                pinned[name] = shape
        return pinned

    def get_inputs(self):
        """The graph's inputs (initializers excluded), in file order, as NodeArgs."""
        return list(self._inputs)

    def get_outputs(self):
        """The graph's outputs, in file order, as NodeArgs."""
        return list(self._outputs)

    def get_providers(self):
        """["CPUExecutionProvider"], or [the backend, "CPUExecutionProvider"] for opencv or a
        plugin (edgemm's native kernels run what the backend refuses)."""
        return list(self._providers)

    def get_provider_options(self):
        return {name: {} for name in self._providers}

    def __repr__(self):
        model = self._model_path or f"<{len(self._model)} bytes>"
        return f"edgemm.InferenceSession('{model}', providers={self._providers})"

    def get_session_options(self):
        return self._options

    def set_providers(self, providers=None, provider_options=None):
        """Loads the model again for `providers`."""
        self._create(providers, provider_options)

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model on `input_feed` ({input name: numpy array}; C-contiguous arrays of the
        input's dtype are read in place, not copied) and returns the outputs named in
        `output_names` (all, in the model's order, when None or empty) as numpy arrays that own
        their memory. Errors: edgemm.InvalidArgument naming the input and value for an unknown or
        missing name, a wrong dtype, rank or fixed extent, a non-contiguous or non-numeric array;
        others from the kernels (naming the node and op)."""
        if not isinstance(input_feed, dict):
            raise TypeError(f"input_feed must be a dict of input name to numpy array, got {type(input_feed).__name__}")
        if isinstance(output_names, str):
            raise TypeError("output_names must be a list of names (or None), not a str")
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise TypeError(f"run_options must be an edgemm.RunOptions, got {type(run_options).__name__}")
        names = None if not output_names else [str(n) for n in output_names]
        return self._session.run(names, input_feed)

    def end_profiling(self):
        """The path of the profile (Chrome trace JSON of the latest run) when
        SessionOptions.enable_profiling was set, else ""."""
        return self._profile_path
