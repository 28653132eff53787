"""Models at ai.onnx opsets 18-21 for convert_cli_test.sh: one of ops that opset 17 can express
(their rewrites), two that it cannot, and one whose op edgemm has no kernel for. Written with onnx.helper (libonnx 1.12's checker would
refuse opsets above 17). Usage: opset21_models.py OUT_DIR"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
rng = np.random.default_rng(21)


def model(nodes, inputs, outputs, opset, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = {18: 8, 19: 9, 20: 9, 21: 10}[opset]
    return m


def tensor(name, array):
    return numpy_helper.from_array(array, name)


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 6])
outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("m", "s0", "s1", "d")]
save(model([
    helper.make_node("GroupNormalization", ["x", "gn_scale", "gn_bias"], ["n"], num_groups=2, epsilon=1e-5),
    helper.make_node("Gelu", ["n"], ["g"], approximate="tanh"),
    helper.make_node("Mish", ["g"], ["mish"]),
    helper.make_node("Resize", ["mish", "", "scales"], ["r"], mode="linear"),
    helper.make_node("Pad", ["r", "pads", "", "pad_axes"], ["p"], mode="reflect"),
    helper.make_node("ReduceMean", ["p", "mean_axes"], ["m"], keepdims=1),
    helper.make_node("Split", ["p"], ["s0", "half1"], axis=2, num_outputs=2),
    helper.make_node("Gelu", ["half1"], ["s1g"]),
    helper.make_node("ReduceMax", ["s1g", "max_axes"], ["s1"], keepdims=0),
    helper.make_node("Unsqueeze", ["s0", "unsq_axes"], ["u"]),
    helper.make_node("Squeeze", ["u", "unsq_axes"], ["d"]),
], [x], outputs, 21, [
    tensor("gn_scale", rng.standard_normal(4).astype(np.float32)),
    tensor("gn_bias", rng.standard_normal(4).astype(np.float32)),
    tensor("scales", np.array([1, 1, 2, 2], np.float32)),
    tensor("pads", np.array([1, 2], np.int64)),
    tensor("pad_axes", np.array([-2], np.int64)),
    tensor("mean_axes", np.array([-1], np.int64)),
    tensor("max_axes", np.array([1, 3], np.int64)),
    tensor("unsq_axes", np.array([0], np.int64)),
]), f"{out}/ops21.onnx")

a = helper.make_tensor_value_info("a", TensorProto.INT32, [4])
save(model([helper.make_node("BitwiseAnd", ["a", "a"], ["b"])], [a],
           [helper.make_tensor_value_info("b", TensorProto.INT32, [4])], 18), f"{out}/bitwise18.onnx")
save(model([helper.make_node("Resize", ["x", "", "half"], ["y"], mode="linear", antialias=1)], [x],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 18,
           [tensor("half", np.array([1, 1, 0.5, 0.5], np.float32))]), f"{out}/antialias18.onnx")
encoded = helper.make_tensor_value_info("encoded", TensorProto.UINT8, [64])
save(model([helper.make_node("ImageDecoder", ["encoded"], ["image"])], [encoded],
           [helper.make_tensor_value_info("image", TensorProto.UINT8, None)], 20), f"{out}/image_decoder20.onnx")
