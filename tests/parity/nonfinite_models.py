#!/usr/bin/env python3
"""Writes the small ONNX graphs of the non-finite parity test (tests/parity/nonfinite_test.sh).

Each case is a graph that edgemm's passes fuse (a Conv / ConvTranspose / MatMul epilogue, an
elementwise chain, an int8 convolution with a float epilogue) and inputs that hold NaN, +Inf and
-Inf among ordinary values. ONNX Runtime runs the graphs op by op (the oracle: ONNX operator
semantics, Relu(NaN) = NaN, Clip(NaN) = NaN, Max/Min propagate NaN, Sigmoid(+-Inf) = 1/0, ...);
edgemm runs them fused and must give the same NaN positions, the same infinities and close
finite values.

usage: nonfinite_models.py OUTDIR
Writes OUTDIR/<case>.onnx, OUTDIR/<case>_<input>.npy and OUTDIR/cases.tsv, one line per case:
name, the op the fusion must produce (in the op histogram of `edgemm inspect --optimized`), the
ops it must absorb (comma-separated: none of them may be left), and the inputs as NAME=FILE pairs
separated by spaces. Deterministic (seeded); needs numpy and onnx (Debian's /usr/bin/python3).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NAN, INF = np.float32(np.nan), np.float32(np.inf)
OPSET = 17


def with_specials(shape, seed, count=3, scale=2.0):
    """Seeded uniform values in [-scale, scale) with `count` NaN, +Inf and -Inf each, spread out."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-scale, scale, size=shape).astype(np.float32)
    flat = x.reshape(-1)
    spots = rng.choice(flat.size, size=3 * count, replace=False)
    flat[spots[:count]] = NAN
    flat[spots[count:2 * count]] = INF
    flat[spots[2 * count:]] = -INF
    return x


def weights(shape, seed, scale=0.5):
    """Seeded weights without zeros (an infinity times 0 would hide the sign being tested)."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.05, scale, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return w.astype(np.float32)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)


class Writer:
    def __init__(self, out):
        self.out = out
        self.lines = []

    def case(self, name, fused_op, absorbed, nodes, feeds, inits, out_shape, opset=OPSET):
        inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
        output = helper.make_tensor_value_info('y', TensorProto.FLOAT, out_shape)
        graph = helper.make_graph(nodes, name, inputs, [output], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(self.out, name + '.onnx'))
        pairs = []
        for k, v in feeds.items():
            path = os.path.join(self.out, f'{name}_{k}.npy')
            np.save(path, v)
            pairs.append(f'{k}={path}')
        self.lines.append('\t'.join([name, fused_op, absorbed, ' '.join(pairs)]))

    def finish(self):
        with open(os.path.join(self.out, 'cases.tsv'), 'w') as f:
            f.write('\n'.join(self.lines) + '\n')


def conv_cases(w):
    x = with_specials((1, 8, 10, 10), 1)
    cw, cb = weights((16, 8, 3, 3), 2), weights((16,), 3)
    base = [const('W', cw), const('B', cb)]
    conv = helper.make_node('Conv', ['x', 'W', 'B'], ['c'], pads=[1, 1, 1, 1])
    out = (1, 16, 10, 10)
    unary = {
        'relu': [helper.make_node('Relu', ['c'], ['y'])],
        'sigmoid': [helper.make_node('Sigmoid', ['c'], ['y'])],
        'tanh': [helper.make_node('Tanh', ['c'], ['y'])],
        'hardswish': [helper.make_node('HardSwish', ['c'], ['y'])],
        'hardsigmoid': [helper.make_node('HardSigmoid', ['c'], ['y'], alpha=0.25, beta=0.4)],
    }
    for step, nodes in unary.items():
        w.case(f'conv_{step}', 'FusedConv', nodes[0].op_type, [conv] + nodes, {'x': x}, base, out)
    w.case('conv_clip', 'FusedConv', 'Clip', [conv, helper.make_node('Clip', ['c', 'lo', 'hi'], ['y'])], {'x': x},
           base + [const('lo', -1.0), const('hi', 6.0)], out)
    # Swish as exporters write it, and Relu6 as Max/Min with constants (chain fusion makes clips).
    w.case('conv_swish', 'FusedConv', 'Sigmoid,Mul',
           [conv, helper.make_node('Sigmoid', ['c'], ['s']), helper.make_node('Mul', ['c', 's'], ['y'])], {'x': x},
           base, out)
    w.case('conv_max_min', 'FusedConv', 'Max,Min',
           [conv, helper.make_node('Max', ['c', 'zero'], ['m']), helper.make_node('Min', ['m', 'six'], ['y'])],
           {'x': x}, base + [const('zero', 0.0), const('six', 6.0)], out)
    # A residual operand with its own non-finite values, then Relu.
    r = with_specials(out, 4)
    w.case('conv_add_relu', 'FusedConv', 'Add,Relu',
           [conv, helper.make_node('Add', ['c', 'r'], ['a']), helper.make_node('Relu', ['a'], ['y'])],
           {'x': x, 'r': r}, base, out)
    # Depthwise, and two convolutions in a row (the layout pass keeps the value between them blocked).
    dw = weights((8, 1, 3, 3), 5)
    w.case('conv_depthwise_relu', 'FusedConv', 'Conv,Relu',
           [helper.make_node('Conv', ['x', 'Wd'], ['c'], pads=[1, 1, 1, 1], group=8),
            helper.make_node('Relu', ['c'], ['y'])], {'x': x}, [const('Wd', dw)], (1, 8, 10, 10))
    # 1x1 and strided convolutions (other oneDNN implementations).
    w.case('conv1x1_hardsigmoid', 'FusedConv', 'HardSigmoid',
           [helper.make_node('Conv', ['x', 'W1'], ['c']), helper.make_node('HardSigmoid', ['c'], ['y'])], {'x': x},
           [const('W1', weights((24, 8, 1, 1), 12))], (1, 24, 10, 10))
    w.case('conv_stride2_clip', 'FusedConv', 'Clip',
           [helper.make_node('Conv', ['x', 'W', 'B'], ['c'], pads=[1, 1, 1, 1], strides=[2, 2]),
            helper.make_node('Clip', ['c', 'lo', 'hi'], ['y'])], {'x': x}, base + [const('lo', 0.0), const('hi', 6.0)],
           (1, 16, 5, 5))
    w2 = weights((16, 16, 3, 3), 6, scale=0.2)
    w.case('conv_relu_conv_clip', 'FusedConv', 'Conv,Relu,Clip',
           [conv, helper.make_node('Relu', ['c'], ['r1']),
            helper.make_node('Conv', ['r1', 'W2'], ['c2'], pads=[1, 1, 1, 1]),
            helper.make_node('Clip', ['c2', 'lo', 'hi'], ['y'])], {'x': x},
           base + [const('W2', w2), const('lo', 0.0), const('hi', 6.0)], out)


def conv_transpose_cases(w):
    x = with_specials((1, 8, 6, 6), 7)
    # Kernel 3, stride 2, pads 1: oneDNN's deconvolution, the epilogue in loops.
    wt = weights((8, 12, 3, 3), 8)
    w.case('conv_transpose_sigmoid', 'FusedConvTranspose', 'ConvTranspose,Sigmoid',
           [helper.make_node('ConvTranspose', ['x', 'Wt', 'Bt'], ['c'], strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node('Sigmoid', ['c'], ['y'])], {'x': x}, [const('Wt', wt), const('Bt', weights((12,), 9))],
           (1, 12, 11, 11))
    # Kernel = stride = 2: edgemm's strided kernel runs the unary epilogue itself.
    ws = weights((8, 16, 2, 2), 10)
    w.case('conv_transpose_strided_relu', 'FusedConvTranspose', 'ConvTranspose,Relu',
           [helper.make_node('ConvTranspose', ['x', 'Ws', 'Bs'], ['c'], strides=[2, 2]),
            helper.make_node('Relu', ['c'], ['y'])], {'x': x}, [const('Ws', ws), const('Bs', weights((16,), 11))],
           (1, 16, 12, 12))


def matmul_cases(w):
    a = with_specials((2, 5, 16), 12, count=2)
    b, bias = weights((16, 24), 13), weights((24,), 14)
    mm = [helper.make_node('MatMul', ['a', 'Bm'], ['p']), helper.make_node('Add', ['p', 'bias'], ['q'])]
    inits = [const('Bm', b), const('bias', bias)]
    # GELU as exporters write it: 0.5 * x * (1 + erf(x / sqrt(2))).
    gelu = [helper.make_node('Div', ['q', 'sqrt2'], ['g1']), helper.make_node('Erf', ['g1'], ['g2']),
            helper.make_node('Add', ['g2', 'one'], ['g3']), helper.make_node('Mul', ['q', 'g3'], ['g4']),
            helper.make_node('Mul', ['g4', 'half'], ['y'])]
    w.case('matmul_gelu', 'FusedMatMul', 'MatMul,Erf,Mul', mm + gelu, {'a': a},
           inits + [const('sqrt2', np.sqrt(2.0)), const('one', 1.0), const('half', 0.5)], (2, 5, 24))
    w.case('matmul_relu', 'FusedMatMul', 'MatMul,Relu', mm + [helper.make_node('Relu', ['q'], ['y'])], {'a': a}, inits,
           (2, 5, 24))
    w.case('matmul_swish', 'FusedMatMul', 'MatMul,Sigmoid,Mul',
           mm + [helper.make_node('Sigmoid', ['q'], ['s']), helper.make_node('Mul', ['q', 's'], ['y'])], {'a': a},
           inits, (2, 5, 24))
    # More rows than edgemm's panels take (256): oneDNN's matmul runs the epilogue.
    a3 = with_specials((3, 100, 16), 17, count=4)
    w.case('matmul_rows300_gelu', 'FusedMatMul', 'MatMul,Erf,Mul', mm + gelu, {'a': a3},
           inits + [const('sqrt2', np.sqrt(2.0)), const('one', 1.0), const('half', 0.5)], (3, 100, 24))
    w.case('matmul_rows300_relu', 'FusedMatMul', 'MatMul,Relu', mm + [helper.make_node('Relu', ['q'], ['y'])],
           {'a': a3}, inits, (3, 100, 24))
    # Gemm with alpha, beta and a C holding non-finite values, then Relu and Clip (a chain).
    a2 = with_specials((6, 16), 15, count=2)
    c = with_specials((6, 24), 16, count=2)
    w.case('gemm_relu_clip', 'ElementwiseChain', 'Relu,Clip', [
        helper.make_node('Gemm', ['a2', 'Bm', 'c'], ['g'], alpha=0.5, beta=2.0),
        helper.make_node('Relu', ['g'], ['r']),
        helper.make_node('Clip', ['r', 'lo', 'hi'], ['y'])
    ], {'a2': a2, 'c': c}, inits[:1] + [const('lo', 0.0), const('hi', 4.0)], (6, 24))


def chain_cases(w):
    shape = (2, 3, 4, 16)
    x, o1, o2 = with_specials(shape, 20, count=8, scale=8.0), with_specials(shape, 21, count=8), \
        with_specials((1, 3, 1, 1), 22, count=1)
    w.case('chain_binary', 'ElementwiseChain', 'Add,Relu,Mul,Max,Min,Sub,Div', [
        helper.make_node('Add', ['x', 'o1'], ['t1']),
        helper.make_node('Relu', ['t1'], ['t2']),
        helper.make_node('Mul', ['t2', 'o2'], ['t3']),
        helper.make_node('Max', ['t3', 'o1'], ['t4']),
        helper.make_node('Min', ['t4', 'six'], ['t5']),
        helper.make_node('Sub', ['t5', 'o2'], ['t6']),
        helper.make_node('Div', ['t6', 'o1'], ['y']),
    ], {'x': x, 'o1': o1, 'o2': o2}, [const('six', 6.0)], shape)
    w.case('chain_unary', 'ElementwiseChain', 'HardSigmoid,Neg,Add,Clip,Tanh,Mul', [
        helper.make_node('HardSigmoid', ['x'], ['t1'], alpha=0.3, beta=0.1),
        helper.make_node('Neg', ['t1'], ['t2']),
        helper.make_node('Add', ['t2', 'o1'], ['t3']),
        helper.make_node('Clip', ['t3', 'lo', 'hi'], ['t4']),
        helper.make_node('Tanh', ['t4'], ['t5']),
        helper.make_node('Abs', ['o1'], ['a1']),
        helper.make_node('Mul', ['t5', 'a1'], ['y']),
    ], {'x': x, 'o1': o1}, [const('lo', -1.5), const('hi', 0.5)], shape)
    w.case('chain_transcendental', 'ElementwiseChain', 'Sigmoid,Add,Exp,Sqrt,HardSwish,Pow', [
        helper.make_node('Sigmoid', ['x'], ['t1']),
        helper.make_node('Add', ['t1', 'o1'], ['t2']),
        helper.make_node('Exp', ['t2'], ['t3']),
        helper.make_node('Sqrt', ['t3'], ['t4']),
        helper.make_node('HardSwish', ['t4'], ['t5']),
        helper.make_node('Pow', ['t5', 'o2'], ['y']),
    ], {'x': x, 'o1': o1, 'o2': o2}, [], shape)


def int8_cases(w):
    """QDQ convolution (edgemm: Int8Conv) whose float epilogue adds an operand with NaN/Inf."""
    rng = np.random.default_rng(30)
    x = rng.uniform(-2, 2, size=(1, 8, 10, 10)).astype(np.float32)
    r = with_specials((1, 16, 10, 10), 31)
    wq = rng.integers(-100, 100, size=(16, 8, 3, 3)).astype(np.int8)
    inits = [
        const('xs', 4.0 / 255), numpy_helper.from_array(np.array(128, np.uint8), 'xz'),
        numpy_helper.from_array(wq, 'Wq'), const('ws', 0.004), numpy_helper.from_array(np.array(0, np.int8), 'wz'),
        const('B', weights((16,), 32))
    ]
    nodes = [
        helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
        helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
        helper.make_node('DequantizeLinear', ['Wq', 'ws', 'wz'], ['wd']),
        helper.make_node('Conv', ['xd', 'wd', 'B'], ['c'], pads=[1, 1, 1, 1]),
        helper.make_node('Add', ['c', 'r'], ['a']),
        helper.make_node('Relu', ['a'], ['y']),
    ]
    w.case('int8_conv_add_relu', 'Int8Conv', 'Conv,Add,Relu', nodes, {'x': x, 'r': r}, inits, (1, 16, 10, 10))
    # NaN and infinities in X itself: QuantizeLinear saturates +-Inf and maps NaN to 0 in ONNX
    # Runtime; the convolution of quantized values is finite, so Relu may run as a post-op.
    relu = nodes[:4] + [helper.make_node('Relu', ['c'], ['y'])]
    w.case('int8_conv_relu', 'Int8Conv', 'Conv,Relu', relu, {'x': with_specials((1, 8, 10, 10), 33)}, inits,
           (1, 16, 10, 10))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    w = Writer(out)
    conv_cases(w)
    conv_transpose_cases(w)
    matmul_cases(w)
    chain_cases(w)
    int8_cases(w)
    w.finish()


if __name__ == '__main__':
    main()
