#!/usr/bin/env python3
"""Writes the single-op models of the opset 18-21 parity test (tests/parity/opset_next_test.sh).

One small model per case, at the ai.onnx opset where the op (or the feature tested) changed:
the Reduce*-18 axes input, Split-18 num_outputs, Pad-18 axes / Pad-19 wrap / Pad-21, Resize-18
(axes, keep_aspect_ratio_policy, antialias) and Resize-19 (half_pixel_symmetric), ScatterND /
ScatterElements-18 max and min, LpPool-18, AveragePool-19 dilations, Cast / CastLike-19,
QuantizeLinear / DequantizeLinear-19 and -21 (per tensor, per axis, blocked, output_dtype),
GridSample-20, AffineGrid-20, DFT-20, Mish-18, Gelu-20, Bitwise*-18, GroupNormalization-18 / -21,
Col2Im-18, CenterCropPad-18, DeformConv-19, the types-only bumps of opset 21 and a small
exporter-style opset-21 graph chaining several of the new ops. Constants (axes, pads, sizes,
...) are initializers as exporters write them; some cases feed them as graph inputs instead
(the `_input` cases). Outputs are declared with their element type only: the shapes are for
edgemm's inference to find.

The models are written with onnx.helper (libonnx 1.12) and never checked with onnx.checker:
libonnx 1.12 knows opsets up to 17 only and would refuse them. ir_version is 8 at opset 18,
9 at opsets 19-20 and 10 at opset 21 (and 22, for the error case).

usage: opset_next_models.py OUTDIR
Writes OUTDIR/<case>.onnx, OUTDIR/<case>_<input>.npy (numpy default_rng, fixed seeds:
deterministic) and OUTDIR/manifest.json:
  {"cases": [{"name", "model", "opset", "inputs": {NAME: FILE}, "atol", "rtol", "threads": [..],
              "note"}],
   "inspect": {"model": ..., "inputs": {..}},       the multi-op model `edgemm inspect` checks
   "unsupported": {"model": ..., "opset": 22}}      a model edgemm must refuse
Float outputs must be within atol + rtol * |expected| (NaN where the oracle has NaN); integer
and bool outputs must be equal. Needs numpy and onnx (Debian's /usr/bin/python3).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper, mapping, numpy_helper

IR_VERSION = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10}
ATOL, RTOL = 1e-5, 1e-5


def elem_type(dtype):
    return mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def init(name, value, dtype=None):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def i64(name, value):
    return init(name, value, np.int64)


def f32(name, value):
    return init(name, value, np.float32)


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []
        self.names = set()
        self.seed = 1000

    def rng(self):
        self.seed += 1
        return np.random.default_rng(self.seed)

    def model(self, name, opset, nodes, feeds, outputs, inits=(), shapes=True):
        """Writes OUTDIR/name.onnx; feeds: {input: array}; outputs: [(name, numpy dtype)]."""
        inputs = [helper.make_tensor_value_info(k, elem_type(v.dtype), v.shape if shapes else None)
                  for k, v in feeds.items()]
        outs = [helper.make_tensor_value_info(k, elem_type(t), None) for k, t in outputs]
        graph = helper.make_graph(nodes, name, inputs, outs, list(inits))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)],
                                  producer_name='opset_next_models.py')
        model.ir_version = IR_VERSION[opset]
        path = os.path.join(self.out, name + '.onnx')
        onnx.save(model, path)
        files = {}
        for k, v in feeds.items():
            files[k] = os.path.join(self.out, f'{name}_{k}.npy')
            np.save(files[k], v)
        return path, files

    def case(self, name, opset, nodes, feeds, outputs, inits=(), atol=ATOL, rtol=RTOL, threads=(1,), note=''):
        assert name not in self.names, name
        self.names.add(name)
        if not isinstance(outputs, list):  # one output 'y' of that dtype
            outputs = [('y', outputs)]
        path, files = self.model(name, opset, nodes, feeds, outputs, inits)
        self.cases.append({'name': name, 'model': path, 'opset': opset, 'inputs': files, 'atol': atol,
                           'rtol': rtol, 'threads': list(threads), 'note': note})

    def finish(self, extra):
        manifest = {'cases': self.cases}
        manifest.update(extra)
        with open(os.path.join(self.out, 'manifest.json'), 'w') as f:
            json.dump(manifest, f, indent=1)


def node(op, inputs, outputs=('y',), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), **attrs)


# ---- Reduce*-18: axes as an input ------------------------------------------------------------
REDUCE_OPS = ['ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceMax', 'ReduceMean', 'ReduceMin',
              'ReduceProd', 'ReduceSumSquare']


def reduce_input(w, op, shape=(2, 3, 4, 5)):
    rng = w.rng()
    if op == 'ReduceLogSum':
        return rng.uniform(0.1, 2.0, shape).astype(np.float32)
    if op == 'ReduceProd':
        return rng.uniform(0.6, 1.5, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def reduce_cases(w):
    for op in REDUCE_OPS:
        low = op[len('Reduce'):].lower()
        x = reduce_input(w, op)
        w.case(f'reduce{low}_18_axes_neg', 18, [node(op, ['x', 'axes'], keepdims=1)], {'x': x}, np.float32,
               [i64('axes', [-1, 1])])
        w.case(f'reduce{low}_18_keepdims0', 18, [node(op, ['x', 'axes'], keepdims=0)], {'x': x}, np.float32,
               [i64('axes', [0, 2])], threads=(1, 2) if op in ('ReduceSumSquare', 'ReduceLogSumExp') else (1,))
    x = reduce_input(w, 'ReduceMean')
    # noop_with_empty_axes=1 with an empty axes tensor, and with axes omitted: the input unchanged.
    w.case('reducemean_18_noop_empty_axes', 18, [node('ReduceMean', ['x', 'axes'], noop_with_empty_axes=1)], {'x': x},
           np.float32, [i64('axes', np.zeros((0,), np.int64))])
    w.case('reducemax_18_noop_axes_omitted', 18, [node('ReduceMax', ['x'], noop_with_empty_axes=1)], {'x': x},
           np.float32)
    # Axes omitted / empty without noop: reduce every axis.
    w.case('reducel2_18_axes_omitted', 18, [node('ReduceL2', ['x'])], {'x': x}, np.float32)
    w.case('reducesumsquare_18_empty_axes_keepdims0', 18, [node('ReduceSumSquare', ['x', 'axes'], keepdims=0)],
           {'x': x}, np.float32, [i64('axes', np.zeros((0,), np.int64))])
    w.case('reducemin_18_axes_omitted_keepdims0', 18, [node('ReduceMin', ['x'], keepdims=0)], {'x': x}, np.float32)
    # Axes as graph inputs.
    w.case('reducelogsumexp_18_axes_input', 18, [node('ReduceLogSumExp', ['x', 'axes'], keepdims=0)],
           {'x': x, 'axes': np.array([-2, 0], np.int64)}, np.float32)
    w.case('reduceprod_18_axes_input', 18, [node('ReduceProd', ['x', 'axes'])],
           {'x': reduce_input(w, 'ReduceProd'), 'axes': np.array([-1], np.int64)}, np.float32)
    # exp(x) overflows float32 past 88.7: LogSumExp must still be finite (max subtracted first).
    w.case('reducelogsumexp_18_large_values', 18, [node('ReduceLogSumExp', ['x', 'axes'], keepdims=0)],
           {'x': w.rng().uniform(80, 100, (3, 6)).astype(np.float32)}, np.float32, [i64('axes', [-1])])
    # Integer data.
    xi = w.rng().integers(-50, 50, (3, 4, 5)).astype(np.int32)
    w.case('reducemax_18_int32', 18, [node('ReduceMax', ['x', 'axes'], keepdims=0)], {'x': xi}, np.int32,
           [i64('axes', [1])])
    w.case('reducemin_18_int64', 18, [node('ReduceMin', ['x', 'axes'])], {'x': xi.astype(np.int64)}, np.int64,
           [i64('axes', [-1, 0])])
    # ReduceMax / ReduceMin-20 accept bool.
    xb = w.rng().uniform(size=(3, 4, 5)) < 0.3
    w.case('reducemax_20_bool', 20, [node('ReduceMax', ['x', 'axes'], keepdims=0)], {'x': xb}, np.bool_,
           [i64('axes', [1])])
    w.case('reducemin_20_bool', 20, [node('ReduceMin', ['x', 'axes'], keepdims=1)], {'x': ~xb}, np.bool_,
           [i64('axes', [0, -1])])


# ---- Split-18 ------------------------------------------------------------------------------
def split_cases(w):
    def outs(n, dtype=np.float32):
        return [(f'y{i}', dtype) for i in range(n)]

    rng = w.rng()
    w.case('split_18_num_outputs_even', 18, [node('Split', ['x'], ['y0', 'y1', 'y2'], axis=1, num_outputs=3)],
           {'x': rng.standard_normal((2, 6, 4)).astype(np.float32)}, outs(3))
    w.case('split_18_num_outputs_uneven', 18, [node('Split', ['x'], ['y0', 'y1', 'y2'], axis=1, num_outputs=3)],
           {'x': rng.standard_normal((2, 7, 4)).astype(np.float32)}, outs(3), threads=(1, 2))
    w.case('split_18_num_outputs_4_of_10', 18,
           [node('Split', ['x'], ['y0', 'y1', 'y2', 'y3'], axis=0, num_outputs=4)],
           {'x': rng.standard_normal((10, 3)).astype(np.float32)}, outs(4))
    w.case('split_18_num_outputs_neg_axis_int64', 18, [node('Split', ['x'], ['y0', 'y1'], axis=-1, num_outputs=2)],
           {'x': rng.integers(-9, 9, (3, 5)).astype(np.int64)}, outs(2, np.int64))
    w.case('split_18_split_initializer', 18, [node('Split', ['x', 'split'], ['y0', 'y1'], axis=1)],
           {'x': rng.standard_normal((2, 7)).astype(np.float32)}, outs(2), [i64('split', [2, 5])])
    w.case('split_18_split_input', 18, [node('Split', ['x', 'split'], ['y0', 'y1', 'y2'], axis=0)],
           {'x': rng.standard_normal((6, 2)).astype(np.float32), 'split': np.array([1, 0, 5], np.int64)}, outs(3))


# ---- Pad-18 / 19 / 21 ------------------------------------------------------------------------
def pad_cases(w):
    rng = w.rng()
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    w.case('pad_18_axes_constant', 18, [node('Pad', ['x', 'pads', 'value', 'axes'])], {'x': x}, np.float32,
           [i64('pads', [1, 2, 0, 1]), f32('value', 1.5), i64('axes', [2, 3])])
    w.case('pad_18_axes_neg_reflect', 18, [node('Pad', ['x', 'pads', '', 'axes'], mode='reflect')], {'x': x},
           np.float32, [i64('pads', [2, 1]), i64('axes', [-1])])
    w.case('pad_18_axes_mixed_edge', 18, [node('Pad', ['x', 'pads', '', 'axes'], mode='edge')], {'x': x}, np.float32,
           [i64('pads', [1, 0, 0, 2]), i64('axes', [1, -2])])
    w.case('pad_18_axes_negative_pads', 18, [node('Pad', ['x', 'pads', 'value', 'axes'])], {'x': x}, np.float32,
           [i64('pads', [-1, 2, 1, -2]), f32('value', -3.0), i64('axes', [3, 2])])
    w.case('pad_18_axes_input', 18, [node('Pad', ['x', 'pads', '', 'axes'])],
           {'x': x, 'pads': np.array([0, 1, 2, 0], np.int64), 'axes': np.array([-3, -1], np.int64)}, np.float32)
    w.case('pad_18_int64_axes', 18, [node('Pad', ['x', 'pads', 'value', 'axes'])],
           {'x': rng.integers(-100, 100, (3, 4)).astype(np.int64)}, np.int64,
           [i64('pads', [2, 1]), i64('value', 7), i64('axes', [0])])
    w.case('pad_19_wrap', 19, [node('Pad', ['x', 'pads'], mode='wrap')], {'x': x}, np.float32,
           [i64('pads', [0, 1, 1, 2, 0, 0, 2, 3])])
    w.case('pad_19_wrap_axes', 19, [node('Pad', ['x', 'pads', '', 'axes'], mode='wrap')], {'x': x}, np.float32,
           [i64('pads', [3, 1, 1, 0]), i64('axes', [-1, 2])], threads=(1, 2))
    w.case('pad_19_wrap_negative_pads', 19, [node('Pad', ['x', 'pads', '', 'axes'], mode='wrap')], {'x': x},
           np.float32, [i64('pads', [2, -1]), i64('axes', [3])])
    # Not here: wrap pads larger than the axis (pads 7 on 5 values). ONNX Runtime 1.30 fills the
    # first 7 - 5 values with zeros; numpy's np.pad(mode='wrap') (the ONNX reference) wraps again.
    w.case('pad_21_constant_axes', 21, [node('Pad', ['x', 'pads', 'value', 'axes'])], {'x': x}, np.float32,
           [i64('pads', [1, 1, 2, 2]), f32('value', 0.25), i64('axes', [0, 3])])
    w.case('pad_21_reflect_uint8', 21, [node('Pad', ['x', 'pads'], mode='reflect')],
           {'x': rng.integers(0, 255, (2, 5)).astype(np.uint8)}, np.uint8, [i64('pads', [1, 2, 0, 3])])
    w.case('pad_21_wrap_int8', 21, [node('Pad', ['x', 'pads'], mode='wrap')],
           {'x': rng.integers(-128, 127, (3, 4)).astype(np.int8)}, np.int8, [i64('pads', [1, 0, 2, 3])])


# ---- Resize-18 / 19 ------------------------------------------------------------------------
def resize_cases(w):
    rng = w.rng()
    x = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    big = rng.standard_normal((1, 2, 12, 16)).astype(np.float32)

    def resize(name, opset, x, scales=None, sizes=None, roi=None, feeds=None, threads=(1,), atol=ATOL, note='',
               **attrs):
        """scales / sizes / roi: values for an initializer, or 'input' when `feeds` has them."""
        ins = ['x', 'roi' if roi is not None else '', 'scales' if scales is not None else '',
               'sizes' if sizes is not None else '']
        while ins[-1] == '':
            ins.pop()
        consts = []
        if roi is not None and roi != 'input':
            consts.append(f32('roi', roi))
        if scales is not None and scales != 'input':
            consts.append(f32('scales', scales))
        if sizes is not None and sizes != 'input':
            consts.append(i64('sizes', sizes))
        w.case(name, opset, [node('Resize', ins, **attrs)], dict(feeds or {'x': x}), np.float32, consts,
               threads=threads, atol=atol, note=note)

    resize('resize_18_axes_scales_linear', 18, x, scales=[1.5, 0.5], axes=[2, 3], mode='linear')
    resize('resize_18_axes_sizes_nearest', 18, x, sizes=[13], axes=[3], mode='nearest')
    resize('resize_18_axes_neg_sizes_linear', 18, x, sizes=[5, 4], axes=[-1, -2], mode='linear')
    resize('resize_18_axes_scales_cubic', 18, x, scales=[2.0, 1.5], axes=[3, 2], mode='cubic', cubic_coeff_a=-0.5,
           exclude_outside=1)
    resize('resize_18_not_larger_linear', 18, x, sizes=[4, 4], axes=[2, 3], mode='linear',
           keep_aspect_ratio_policy='not_larger')
    resize('resize_18_not_smaller_nearest', 18, x, sizes=[4, 4], axes=[2, 3], mode='nearest',
           keep_aspect_ratio_policy='not_smaller')
    resize('resize_18_not_larger_upscale_cubic', 18, x, sizes=[20, 9], axes=[2, 3], mode='cubic',
           keep_aspect_ratio_policy='not_larger')
    resize('resize_18_antialias_linear_scales', 18, big, scales=[1.0, 1.0, 0.5, 0.375], mode='linear', antialias=1,
           feeds={'x': big}, threads=(1, 2))
    resize('resize_18_antialias_linear_sizes', 18, big, sizes=[5, 7], axes=[2, 3], mode='linear', antialias=1,
           feeds={'x': big})
    resize('resize_18_antialias_cubic', 18, big, scales=[1.0, 1.0, 0.4, 0.6], mode='cubic', antialias=1,
           feeds={'x': big})
    resize('resize_18_tf_crop_and_resize_axes', 18, x, sizes=[5, 5], roi=[0.1, 0.2, 0.8, 0.9], axes=[2, 3],
           mode='linear', coordinate_transformation_mode='tf_crop_and_resize', extrapolation_value=-1.0)
    resize('resize_18_scales_input', 18, x, scales='input', mode='nearest', nearest_mode='floor', axes=[2, 3],
           feeds={'x': x, 'scales': np.array([0.5, 2.0], np.float32)})
    resize('resize_18_sizes_input', 18, x, sizes='input', mode='linear', axes=[3],
           feeds={'x': x, 'sizes': np.array([11], np.int64)})
    # Scales without exact halves in x / scale (1.6 gives 4 / 1.6 = 2.5 in float32 but 2.49999996 in
    # double: ONNX Runtime and a double-precision kernel then pick different pixels).
    resize('resize_18_axes_nearest_ceil_asymmetric', 18, x, scales=[1.7, 0.7], axes=[2, 3], mode='nearest',
           nearest_mode='round_prefer_ceil', coordinate_transformation_mode='asymmetric')
    resize('resize_18_axes_pytorch_half_pixel_size1', 18, x, sizes=[1, 5], axes=[2, 3], mode='linear',
           coordinate_transformation_mode='pytorch_half_pixel')
    resize('resize_18_antialias_cubic_exclude_outside', 18, big, sizes=[5, 6], axes=[2, 3], mode='cubic',
           antialias=1, exclude_outside=1, cubic_coeff_a=-0.5, feeds={'x': big})
    x19 = rng.standard_normal((1, 1, 4, 5)).astype(np.float32)
    resize('resize_19_half_pixel_symmetric_up', 19, x19, sizes=[1, 1, 7, 9], mode='linear',
           coordinate_transformation_mode='half_pixel_symmetric', feeds={'x': x19})
    resize('resize_19_half_pixel_symmetric_down', 19, x, sizes=[4, 5], axes=[2, 3], mode='linear',
           coordinate_transformation_mode='half_pixel_symmetric')
    resize('resize_19_half_pixel_symmetric_antialias', 19, big, sizes=[5, 7], axes=[2, 3], mode='linear',
           antialias=1, coordinate_transformation_mode='half_pixel_symmetric', feeds={'x': big})
    resize('resize_19_half_pixel_symmetric_nearest', 19, x, scales=[1.7, 0.6], axes=[2, 3], mode='nearest',
           coordinate_transformation_mode='half_pixel_symmetric')


# ---- ScatterND / ScatterElements-18 max and min ---------------------------------------------
def scatter_cases(w):
    rng = w.rng()
    data = rng.standard_normal((4, 5)).astype(np.float32)
    upd = rng.standard_normal((3, 5)).astype(np.float32) * 2
    idx = np.array([[1], [3], [1]], np.int64)  # a duplicate index: reductions combine both updates
    for red in ('max', 'min'):
        w.case(f'scatternd_18_{red}', 18, [node('ScatterND', ['data', 'indices', 'updates'], reduction=red)],
               {'data': data, 'updates': upd}, np.float32, [i64('indices', idx)])
    di = rng.integers(-20, 20, (2, 3, 4)).astype(np.int32)
    ui = rng.integers(-20, 20, (3, 4)).astype(np.int32)
    w.case('scatternd_18_max_int32', 18, [node('ScatterND', ['data', 'indices', 'updates'], reduction='max')],
           {'data': di, 'updates': ui}, np.int32, [i64('indices', [[0, 1], [1, 2], [0, 1]])])
    data = rng.standard_normal((3, 4)).astype(np.float32)
    upd = rng.standard_normal((3, 3)).astype(np.float32) * 2
    idx = np.array([[0, 3, 0], [1, 1, 2], [-1, 2, -1]], np.int64)  # duplicates and negative indices
    for red in ('max', 'min'):
        w.case(f'scatterelements_18_{red}', 18,
               [node('ScatterElements', ['data', 'indices', 'updates'], axis=1, reduction=red)],
               {'data': data, 'updates': upd}, np.float32, [i64('indices', idx)])
    w.case('scatterelements_18_min_axis0_input', 18,
           [node('ScatterElements', ['data', 'indices', 'updates'], axis=-2, reduction='min')],
           {'data': data, 'indices': np.array([[2, 0, 2, 1], [2, 0, 0, 1]], np.int64),
            'updates': rng.standard_normal((2, 4)).astype(np.float32)}, np.float32)


# ---- LpPool-18, AveragePool-19 ------------------------------------------------------------
def pool_cases(w):
    rng = w.rng()
    x = rng.standard_normal((1, 2, 7, 7)).astype(np.float32)
    w.case('lppool_18_ceil_dilations', 18,
           [node('LpPool', ['x'], kernel_shape=[2, 2], strides=[2, 2], dilations=[3, 2], ceil_mode=1, p=2)],
           {'x': x}, np.float32)
    w.case('lppool_18_p1_pads_dilations', 18,
           [node('LpPool', ['x'], kernel_shape=[2, 3], strides=[1, 2], pads=[1, 1, 0, 1], dilations=[1, 2], p=1)],
           {'x': x}, np.float32)
    w.case('lppool_18_p3_ceil', 18, [node('LpPool', ['x'], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, p=3)],
           {'x': x}, np.float32)
    w.case('averagepool_19_dilations', 19,
           [node('AveragePool', ['x'], kernel_shape=[3, 3], dilations=[2, 2], pads=[1, 1, 1, 1])], {'x': x},
           np.float32, threads=(1, 2))
    w.case('averagepool_19_dilations_include_pad', 19,
           [node('AveragePool', ['x'], kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 2, 1, 2], count_include_pad=1,
                 strides=[2, 1])], {'x': x}, np.float32)
    w.case('averagepool_19_dilations_ceil', 19,
           [node('AveragePool', ['x'], kernel_shape=[2, 2], dilations=[2, 2], strides=[2, 2], ceil_mode=1)],
           {'x': rng.standard_normal((1, 2, 8, 8)).astype(np.float32)}, np.float32)
    # Not here: auto_pad SAME_UPPER / SAME_LOWER with dilations. ONNX Runtime 1.30 sizes the padding
    # from the kernel without its dilation (7x7, kernel 3x2, dilations 2x3, strides 2x1 gives 3x5, not
    # ceil(7 / stride) = 4x7 as the spec says).
    w.case('averagepool_19_1d_dilations', 19,
           [node('AveragePool', ['x'], kernel_shape=[3], dilations=[3], pads=[2, 1], strides=[2])],
           {'x': rng.standard_normal((2, 3, 11)).astype(np.float32)}, np.float32)


# ---- Cast / CastLike-19 -----------------------------------------------------------------------
def cast_cases(w):
    rng = w.rng()
    xf = rng.uniform(-100, 100, (3, 4, 5)).astype(np.float32)
    xf.flat[:4] = [2.5, -2.5, 0.5, -0.99]  # truncation toward zero
    xi = rng.integers(-1000, 1000, (3, 4, 5)).astype(np.int32)
    cases = [
        ('float_to_int32', xf, np.int32, dict(saturate=1)),
        ('float_to_int64', xf, np.int64, dict(saturate=1)),
        ('float_to_int8', rng.uniform(-127.9, 127.9, (4, 6)).astype(np.float32), np.int8, dict(saturate=1)),
        ('float_to_uint8', rng.uniform(0, 255.9, (4, 6)).astype(np.float32), np.uint8, dict(saturate=1)),
        ('float_to_float16', xf, np.float16, dict(saturate=1)),
        ('float_to_bool', np.where(rng.uniform(size=(4, 6)) < 0.3, 0, rng.uniform(-2, 2, (4, 6))).astype(np.float32),
         np.bool_, dict(saturate=1)),
        ('int32_to_float', xi, np.float32, dict(saturate=1)),
        ('int64_to_int32', xi.astype(np.int64), np.int32, dict()),
        ('uint8_to_float', rng.integers(0, 256, (3, 5)).astype(np.uint8), np.float32, dict(saturate=1)),
        ('bool_to_int64', rng.uniform(size=(3, 5)) < 0.5, np.int64, dict(saturate=1)),
    ]
    # saturate only applies to float 8 targets; ONNX Runtime 1.30 refuses saturate=0 on other casts
    # ("Attribute saturate is only used for cast to float 8 types"), so the others carry saturate=1.
    for label, x, to, attrs in cases:
        w.case(f'cast_19_{label}', 19, [node('Cast', ['x'], to=elem_type(to), **attrs)], {'x': x}, to)
    # CastLike-19: the type from the second input (an initializer, and a graph input).
    w.case('castlike_19_float_to_int64', 19, [node('CastLike', ['x', 'like'], saturate=1)], {'x': xf}, np.int64,
           [i64('like', [0])])
    w.case('castlike_19_int32_to_float_input', 19, [node('CastLike', ['x', 'like'], saturate=1)],
           {'x': xi, 'like': np.zeros((2,), np.float32)}, np.float32)
    w.case('castlike_19_float_to_uint8', 19, [node('CastLike', ['x', 'like'])],
           {'x': rng.uniform(0, 255.9, (4, 6)).astype(np.float32)}, np.uint8, [init('like', [1], np.uint8)])
    # Cast-19's float8 targets are out of scope (edgemm has no float8 tensors; docs/opsets.md):
    # such a Cast is refused by name, which tests/unit/kernels_opset19_test.cc checks.


# ---- QuantizeLinear / DequantizeLinear-19 and -21 ----------------------------------------------
def qdq_cases(w):
    rng = w.rng()
    x = rng.uniform(-6, 6, (2, 3, 8)).astype(np.float32)
    for opset in (19, 21):
        w.case(f'quantizelinear_{opset}_per_tensor_uint8', opset, [node('QuantizeLinear', ['x', 's', 'z'])], {'x': x},
               np.uint8, [f32('s', 0.047), init('z', 128, np.uint8)])
        w.case(f'quantizelinear_{opset}_per_axis_int8', opset,
               [node('QuantizeLinear', ['x', 's', 'z'], axis=1, saturate=1)], {'x': x}, np.int8,
               [f32('s', [0.02, 0.05, 0.1]), init('z', [-3, 0, 10], np.int8)])
        w.case(f'quantizelinear_{opset}_no_zero_point', opset, [node('QuantizeLinear', ['x', 's'], axis=-1)],
               {'x': x}, np.uint8, [f32('s', rng.uniform(0.01, 0.05, 8))])
        q8 = rng.integers(-128, 128, (2, 3, 8)).astype(np.int8)
        w.case(f'dequantizelinear_{opset}_per_tensor_int8', opset, [node('DequantizeLinear', ['x', 's', 'z'])],
               {'x': q8}, np.float32, [f32('s', 0.031), init('z', -5, np.int8)])
        w.case(f'dequantizelinear_{opset}_per_axis_uint8', opset, [node('DequantizeLinear', ['x', 's', 'z'], axis=-2)],
               {'x': q8.view(np.uint8)}, np.float32, [f32('s', [0.5, 0.25, 0.125]), init('z', [0, 128, 255], np.uint8)])
        w.case(f'dequantizelinear_{opset}_int32', opset, [node('DequantizeLinear', ['x', 's'])],
               {'x': rng.integers(-10**6, 10**6, (3, 7)).astype(np.int32)}, np.float32, [f32('s', 0.0015)])
        # Halfway cases round to even: x / 0.5 = k + 0.5 exactly.
        xt = (np.arange(-24, 24) * 0.25 + 0.125 * (np.arange(48) % 2 == 0)).astype(np.float32).reshape(6, 8)
        xt[0, :4] = [0.25, 0.75, -0.25, -0.75]
        w.case(f'quantizelinear_{opset}_ties_to_even', opset, [node('QuantizeLinear', ['x', 's', 'z'])], {'x': xt},
               np.int8, [f32('s', 0.5), init('z', 1, np.int8)])
    # opset 21: blocked quantization (block_size along an axis; scale has ceil(D / block) there).
    xb = rng.uniform(-4, 4, (4, 8)).astype(np.float32)
    sb = rng.uniform(0.01, 0.05, (4, 2)).astype(np.float32)
    zb = rng.integers(-10, 10, (4, 2)).astype(np.int8)
    w.case('quantizelinear_21_block_axis1', 21, [node('QuantizeLinear', ['x', 's', 'z'], axis=1, block_size=4)],
           {'x': xb}, np.int8, [f32('s', sb), init('z', zb)])
    xb0 = rng.uniform(-4, 4, (6, 3)).astype(np.float32)
    w.case('quantizelinear_21_block_axis0_uint8', 21,
           [node('QuantizeLinear', ['x', 's', 'z'], axis=0, block_size=2)], {'x': xb0}, np.uint8,
           [f32('s', rng.uniform(0.02, 0.05, (3, 3))), init('z', rng.integers(100, 150, (3, 3)), np.uint8)])
    w.case('quantizelinear_21_output_dtype_int8', 21, [node('QuantizeLinear', ['x', 's'], output_dtype=3)], {'x': x},
           np.int8, [f32('s', 0.03)])
    w.case('quantizelinear_21_output_dtype_uint8_per_axis', 21,
           [node('QuantizeLinear', ['x', 's'], axis=1, output_dtype=2)], {'x': x}, np.uint8,
           [f32('s', [0.02, 0.04, 0.06])])
    qb = rng.integers(-128, 128, (4, 8)).astype(np.int8)
    w.case('dequantizelinear_21_block_axis1', 21, [node('DequantizeLinear', ['x', 's', 'z'], axis=1, block_size=4)],
           {'x': qb}, np.float32, [f32('s', sb), init('z', zb)])
    w.case('dequantizelinear_21_block_uneven_axis0_uint8', 21,
           [node('DequantizeLinear', ['x', 's', 'z'], axis=0, block_size=3)], {'x': qb.view(np.uint8)}, np.float32,
           [f32('s', rng.uniform(0.01, 0.1, (2, 8))), init('z', rng.integers(0, 255, (2, 8)), np.uint8)],
           note='8 rows in blocks of 3: the last block has 2')
    w.case('dequantizelinear_21_block_no_zero_point', 21,
           [node('DequantizeLinear', ['x', 's'], axis=-1, block_size=2)], {'x': qb}, np.float32,
           [f32('s', rng.uniform(0.01, 0.1, (4, 4)))])


# ---- GridSample-20, AffineGrid-20 ------------------------------------------------------------
def grid_cases(w):
    rng = w.rng()
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (2, 4, 7, 2)).astype(np.float32)
    for mode in ('linear', 'nearest', 'cubic'):
        for pad in ('zeros', 'border', 'reflection'):
            for ac in (0, 1):
                w.case(f'gridsample_20_{mode}_{pad}_ac{ac}', 20,
                       [node('GridSample', ['x', 'grid'], mode=mode, padding_mode=pad, align_corners=ac)],
                       {'x': x, 'grid': grid}, np.float32,
                       threads=(1, 2) if (pad, ac) == ('border', 0) else (1,))
    x3 = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid3 = rng.uniform(-1.1, 1.1, (1, 2, 3, 4, 3)).astype(np.float32)
    for mode in ('linear', 'nearest'):
        w.case(f'gridsample_20_3d_{mode}', 20, [node('GridSample', ['x', 'grid'], mode=mode, padding_mode='border')],
               {'x': x3, 'grid': grid3}, np.float32)
    theta = rng.uniform(-1, 1, (2, 2, 3)).astype(np.float32)
    for ac in (0, 1):
        w.case(f'affinegrid_20_2d_ac{ac}', 20, [node('AffineGrid', ['theta', 'size'], align_corners=ac)],
               {'theta': theta}, np.float32, [i64('size', [2, 3, 5, 6])])
    theta3 = rng.uniform(-1, 1, (1, 3, 4)).astype(np.float32)
    for ac in (0, 1):
        w.case(f'affinegrid_20_3d_ac{ac}', 20, [node('AffineGrid', ['theta', 'size'], align_corners=ac)],
               {'theta': theta3}, np.float32, [i64('size', [1, 2, 3, 4, 5])])
    w.case('affinegrid_20_size_input', 20, [node('AffineGrid', ['theta', 'size'])],
           {'theta': theta, 'size': np.array([2, 1, 3, 4], np.int64)}, np.float32)


# ---- DFT-20 ------------------------------------------------------------------------------
def dft_cases(w):
    rng = w.rng()
    # An FFT and a direct sum add in different orders: 6.5e-6 apart on values up to ~8 (measured),
    # too close to 1e-5.
    tol = dict(atol=1e-4, rtol=1e-4, note='FFT vs direct summation order: 1e-4')

    def dft(name, x, axis=None, length=None, feeds_extra=None, **attrs):
        ins, inits = ['x', '', ''], []
        if length is not None:
            ins[1] = 'len'
            inits.append(i64('len', length))
        if axis is not None:
            ins[2] = 'axis'
            inits.append(i64('axis', axis))
        feeds = {'x': x}
        if feeds_extra:
            for k, v in feeds_extra.items():
                ins[{'len': 1, 'axis': 2}[k]] = k
                feeds[k] = v
        while ins[-1] == '':
            ins.pop()
        w.case(name, 20, [node('DFT', ins, **attrs)], feeds, np.float32, inits, **tol)

    dft('dft_20_complex_axis1', rng.standard_normal((2, 8, 2)).astype(np.float32), axis=1)
    dft('dft_20_default_axis', rng.standard_normal((2, 8, 2)).astype(np.float32))
    dft('dft_20_real_onesided', rng.standard_normal((2, 10, 1)).astype(np.float32), axis=1, onesided=1)
    dft('dft_20_real_full', rng.standard_normal((2, 7, 1)).astype(np.float32), axis=1)
    dft('dft_20_inverse', rng.standard_normal((1, 8, 2)).astype(np.float32), axis=1, inverse=1)
    dft('dft_20_inverse_odd', rng.standard_normal((1, 5, 3, 2)).astype(np.float32), axis=1, inverse=1)
    dft('dft_20_length_pad', rng.standard_normal((1, 6, 2)).astype(np.float32), axis=1, length=8)
    dft('dft_20_length_trunc_real', rng.standard_normal((1, 10, 1)).astype(np.float32), axis=1, length=6)
    dft('dft_20_axis2', rng.standard_normal((1, 4, 6, 2)).astype(np.float32), axis=2)
    dft('dft_20_axis_neg_real_onesided', rng.standard_normal((1, 4, 6, 1)).astype(np.float32), axis=-2, onesided=1)
    dft('dft_20_axis_neg3', rng.standard_normal((1, 4, 6, 2)).astype(np.float32), axis=-3)
    dft('dft_20_axis_input', rng.standard_normal((2, 3, 12, 2)).astype(np.float32),
        feeds_extra={'axis': np.array(1, np.int64), 'len': np.array(4, np.int64)})


# ---- Mish-18, Gelu-20, Bitwise*-18 -------------------------------------------------------------
def activation_bitwise_cases(w):
    rng = w.rng()
    x = rng.uniform(-8, 8, (3, 4, 16)).astype(np.float32)
    w.case('mish_18', 18, [node('Mish', ['x'])], {'x': x}, np.float32)
    wide = np.concatenate([rng.uniform(-120, 120, 40), [-100.0, -30.0, -20.0, 20.0, 30.0, 100.0, 0.0, -0.0]])
    wide = wide.astype(np.float32).reshape(4, 12)
    w.case('mish_18_wide_range', 18, [node('Mish', ['x'])], {'x': wide}, np.float32,
           note='softplus(100) overflows exp(): Mish(x) -> x')
    w.case('gelu_20_tanh_wide_range', 20, [node('Gelu', ['x'], approximate='tanh')], {'x': wide}, np.float32)
    w.case('gelu_20_none_wide_range', 20, [node('Gelu', ['x'])], {'x': wide}, np.float32)
    w.case('gelu_20_none', 20, [node('Gelu', ['x'])], {'x': x}, np.float32, threads=(1, 2))
    w.case('gelu_20_tanh', 20, [node('Gelu', ['x'], approximate='tanh')], {'x': x}, np.float32)

    def ints(shape, dtype):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)

    w.case('bitwiseand_18_int32_bcast', 18, [node('BitwiseAnd', ['a', 'b'])],
           {'a': ints((3, 4), np.int32), 'b': ints((4,), np.int32)}, np.int32)
    w.case('bitwiseor_18_uint8_bcast', 18, [node('BitwiseOr', ['a', 'b'])],
           {'a': ints((2, 3, 4), np.uint8), 'b': ints((3, 1), np.uint8)}, np.uint8)
    w.case('bitwisexor_18_int64_bcast_both', 18, [node('BitwiseXor', ['a', 'b'])],
           {'a': ints((3, 1), np.int64), 'b': ints((1, 5), np.int64)}, np.int64)
    w.case('bitwiseand_18_int8_scalar', 18, [node('BitwiseAnd', ['a', 'b'])],
           {'a': ints((2, 5), np.int8), 'b': np.array(0x5a, np.int8)}, np.int8)
    w.case('bitwisexor_18_uint8_initializer', 18, [node('BitwiseXor', ['a', 'b'])],
           {'a': ints((4, 3), np.uint8)}, np.uint8, [init('b', [0x0f, 0xf0, 0xff], np.uint8)])
    for t in (np.int8, np.uint8, np.int32, np.int64):
        w.case(f'bitwisenot_18_{np.dtype(t).name}', 18, [node('BitwiseNot', ['a'])], {'a': ints((3, 7), t)}, t)


# ---- GroupNormalization-18 / 21, Col2Im-18, CenterCropPad-18 -----------------------------------
def norm_col2im_crop_cases(w):
    rng = w.rng()
    x = rng.standard_normal((2, 6, 4, 4)).astype(np.float32) * 2 + 0.5
    tol = {}
    # Opset 18: scale and bias per group.
    w.case('groupnormalization_18', 18, [node('GroupNormalization', ['x', 'scale', 'bias'], num_groups=3)], {'x': x},
           np.float32, [f32('scale', rng.uniform(0.5, 2, 3)), f32('bias', rng.standard_normal(3))], **tol)
    w.case('groupnormalization_18_epsilon', 18,
           [node('GroupNormalization', ['x', 'scale', 'bias'], num_groups=2, epsilon=0.1)], {'x': x}, np.float32,
           [f32('scale', rng.uniform(0.5, 2, 2)), f32('bias', rng.standard_normal(2))], **tol)
    # Opset 21: scale and bias per channel, stash_type.
    for groups in (2, 6, 1):
        w.case(f'groupnormalization_21_groups{groups}', 21,
               [node('GroupNormalization', ['x', 'scale', 'bias'], num_groups=groups, stash_type=1)], {'x': x},
               np.float32, [f32('scale', rng.uniform(0.5, 2, 6)), f32('bias', rng.standard_normal(6))],
               threads=(1, 2) if groups == 2 else (1,), **tol)
    x3 = rng.standard_normal((1, 4, 3, 2, 5)).astype(np.float32)
    w.case('groupnormalization_21_5d', 21, [node('GroupNormalization', ['x', 'scale', 'bias'], num_groups=2)],
           {'x': x3}, np.float32, [f32('scale', rng.uniform(0.5, 2, 4)), f32('bias', rng.standard_normal(4))], **tol)

    # Col2Im-18 (on 1 and 2 threads: image positions no block covers must be 0).
    w.case('col2im_18_basic', 18, [node('Col2Im', ['x', 'image', 'block'])],
           {'x': rng.standard_normal((1, 8, 16)).astype(np.float32)}, np.float32,
           [i64('image', [5, 5]), i64('block', [2, 2])], threads=(1, 2))
    w.case('col2im_18_strides_pads_dilations', 18,
           [node('Col2Im', ['x', 'image', 'block'], dilations=[2, 1], pads=[1, 0, 1, 1], strides=[2, 2])],
           {'x': rng.standard_normal((2, 12, 9)).astype(np.float32)}, np.float32,
           [i64('image', [6, 7]), i64('block', [2, 3])], threads=(1, 2))
    w.case('col2im_18_3x3_stride2_pads', 18,
           [node('Col2Im', ['x', 'image', 'block'], pads=[1, 1, 1, 1], strides=[2, 2])],
           {'x': rng.standard_normal((2, 27, 64)).astype(np.float32)}, np.float32,
           [i64('image', [16, 16]), i64('block', [3, 3])], threads=(1, 2))
    w.case('col2im_18_shape_inputs', 18, [node('Col2Im', ['x', 'image', 'block'], strides=[1, 2])],
           {'x': rng.standard_normal((1, 6, 12)).astype(np.float32), 'image': np.array([4, 8], np.int64),
            'block': np.array([1, 3], np.int64)}, np.float32)

    # CenterCropPad-18.
    xc = rng.standard_normal((1, 3, 8, 9)).astype(np.float32)
    w.case('centercroppad_18_crop_axes', 18, [node('CenterCropPad', ['x', 'shape'], axes=[2, 3])], {'x': xc},
           np.float32, [i64('shape', [5, 6])])
    w.case('centercroppad_18_pad_neg_axes', 18, [node('CenterCropPad', ['x', 'shape'], axes=[-2, -1])],
           {'x': rng.standard_normal((1, 3, 4, 5)).astype(np.float32)}, np.float32, [i64('shape', [7, 8])])
    w.case('centercroppad_18_crop_and_pad', 18, [node('CenterCropPad', ['x', 'shape'], axes=[3, 2])], {'x': xc},
           np.float32, [i64('shape', [12, 3])])
    w.case('centercroppad_18_all_axes_int64', 18, [node('CenterCropPad', ['x', 'shape'])],
           {'x': rng.integers(-9, 9, (3, 6, 5)).astype(np.int64)}, np.int64, [i64('shape', [4, 3, 6])])


# ---- DeformConv-19 -----------------------------------------------------------------------
def deform_conv_cases(w):
    rng = w.rng()
    tol = {}
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    wt = (rng.standard_normal((6, 4, 3, 3)) * 0.3).astype(np.float32)
    off = (rng.standard_normal((1, 2 * 9, 4, 4)) * 1.5).astype(np.float32)
    w.case('deformconv_19_no_mask_no_bias', 19, [node('DeformConv', ['x', 'w', 'offset'], kernel_shape=[3, 3])],
           {'x': x, 'offset': off}, np.float32, [f32('w', wt)], **tol)
    mask = rng.uniform(0, 1, (1, 9, 6, 6)).astype(np.float32)
    off_p = (rng.standard_normal((1, 18, 6, 6)) * 1.5).astype(np.float32)
    w.case('deformconv_19_mask_bias_pads', 19,
           [node('DeformConv', ['x', 'w', 'offset', 'b', 'mask'], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
           {'x': x, 'offset': off_p, 'mask': mask}, np.float32, [f32('w', wt), f32('b', rng.standard_normal(6))],
           threads=(1, 2), **tol)
    # Two groups, two offset groups, stride 2, dilation 2, bias without mask.
    x2 = rng.standard_normal((2, 4, 9, 9)).astype(np.float32)
    w2 = (rng.standard_normal((6, 2, 2, 2)) * 0.3).astype(np.float32)
    oh = ow = (9 + 2 - 2 * (2 - 1) - 1) // 2 + 1  # pads 1+1, dilation 2, kernel 2, stride 2 -> 5
    off2 = (rng.standard_normal((2, 2 * 2 * 4, oh, ow))).astype(np.float32)
    w.case('deformconv_19_groups_stride_dilation_bias', 19,
           [node('DeformConv', ['x', 'w', 'offset', 'b'], group=2, offset_group=2, strides=[2, 2], dilations=[2, 2],
                 pads=[1, 1, 1, 1])], {'x': x2, 'offset': off2}, np.float32,
           [f32('w', w2), f32('b', rng.standard_normal(6))], **tol)
    w.case('deformconv_19_mask_no_bias', 19, [node('DeformConv', ['x', 'w', 'offset', '', 'mask'])],
           {'x': x, 'offset': off, 'mask': rng.uniform(0, 1, (1, 9, 4, 4)).astype(np.float32)}, np.float32,
           [f32('w', wt)], **tol)


# ---- Opset 21: types-only bumps ----------------------------------------------------------------
def opset21_cases(w):
    rng = w.rng()
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w.case('reshape_21', 21, [node('Reshape', ['x', 'shape'])], {'x': x}, np.float32, [i64('shape', [0, -1, 2])])
    w.case('reshape_21_shape_input', 21, [node('Reshape', ['x', 'shape'])],
           {'x': x, 'shape': np.array([4, 6], np.int64)}, np.float32)
    x4 = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w.case('shape_21_start_end', 21, [node('Shape', ['x'], start=1, end=-1)], {'x': x4}, np.int64)
    w.case('shape_21_start_neg', 21, [node('Shape', ['x'], start=-2)], {'x': x4}, np.int64)
    w.case('size_21', 21, [node('Size', ['x'])], {'x': x4}, np.int64)
    w.case('transpose_21', 21, [node('Transpose', ['x'], perm=[2, 0, 1])], {'x': x}, np.float32)
    w.case('transpose_21_int8', 21, [node('Transpose', ['x'], perm=[1, 0])],
           {'x': rng.integers(-128, 127, (3, 5)).astype(np.int8)}, np.int8)
    xs = rng.standard_normal((2, 1, 3, 1)).astype(np.float32)
    w.case('squeeze_21', 21, [node('Squeeze', ['x', 'axes'])], {'x': xs}, np.float32, [i64('axes', [1, -1])])
    w.case('squeeze_21_axes_input', 21, [node('Squeeze', ['x', 'axes'])],
           {'x': xs, 'axes': np.array([-3], np.int64)}, np.float32)
    w.case('squeeze_21_no_axes', 21, [node('Squeeze', ['x'])], {'x': xs}, np.float32)
    w.case('unsqueeze_21', 21, [node('Unsqueeze', ['x', 'axes'])], {'x': x}, np.float32, [i64('axes', [0, -1])])
    w.case('flatten_21', 21, [node('Flatten', ['x'], axis=2)], {'x': x4}, np.float32)
    w.case('flatten_21_neg_axis', 21, [node('Flatten', ['x'], axis=-3)], {'x': x4}, np.float32)
    w.case('identity_21_int64', 21, [node('Identity', ['x'])], {'x': rng.integers(-5, 5, (4,)).astype(np.int64)},
           np.int64)
    w.case('constantofshape_21_float', 21,
           [node('ConstantOfShape', ['shape'], value=helper.make_tensor('v', 1, [1], [1.25]))],
           {'shape': np.array([2, 3], np.int64)}, np.float32)
    w.case('constantofshape_21_int32_init', 21,
           [node('ConstantOfShape', ['shape'], value=helper.make_tensor('v', 6, [1], [-7]))], {}, np.int32,
           [i64('shape', [3, 1, 2])])
    w.case('constant_21_add', 21, [node('Constant', [], ['c'], value=numpy_helper.from_array(
        rng.standard_normal((3, 4)).astype(np.float32), 'c')), node('Add', ['x', 'c'])], {'x': x[:, :3, :]},
           np.float32)
    w.case('constant_21_value_ints', 21, [node('Constant', [], ['y'], value_ints=[3, -1, 4])], {}, np.int64)
    a = rng.integers(-3, 3, (3, 4)).astype(np.float32)
    w.case('equal_21_float_bcast', 21, [node('Equal', ['a', 'b'])],
           {'a': a, 'b': rng.integers(-3, 3, (4,)).astype(np.float32)}, np.bool_)
    w.case('equal_21_int64', 21, [node('Equal', ['a', 'b'])],
           {'a': a.astype(np.int64), 'b': rng.integers(-3, 3, (3, 1)).astype(np.int64)}, np.bool_)
    xn = rng.standard_normal((3, 5)).astype(np.float32)
    xn.flat[[0, 4, 7, 11]] = [np.nan, np.inf, -np.inf, np.nan]
    w.case('isnan_21', 21, [node('IsNaN', ['x'])], {'x': xn}, np.bool_)
    w.case('isinf_21', 21, [node('IsInf', ['x'])], {'x': xn}, np.bool_)
    w.case('isinf_21_positive_only', 21, [node('IsInf', ['x'], detect_negative=0)], {'x': xn}, np.bool_)
    # If-21 with subgraphs using ReduceMean-18 (axes input) on an outer-scope value.
    then_g = helper.make_graph([node('ReduceMean', ['x', 'axes'], ['t'], keepdims=1)], 'then', [],
                               [helper.make_tensor_value_info('t', 1, None)])
    else_g = helper.make_graph([node('Constant', [], ['ea'], value_ints=[0]),
                                node('ReduceMean', ['x', 'ea'], ['e0'], keepdims=1),
                                node('Neg', ['e0'], ['e'])], 'else', [],
                               [helper.make_tensor_value_info('e', 1, None)])
    for flag in (True, False):
        w.case(f'if_21_reducemean_{"then" if flag else "else"}', 21,
               [node('If', ['cond'], then_branch=then_g, else_branch=else_g)],
               {'cond': np.array(flag), 'x': x}, np.float32, [i64('axes', [-1])])


# ---- Opset 21: an exporter-style chain of new ops ------------------------------------------------
def exporter_case(w):
    rng = w.rng()
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    nodes = [
        node('Conv', ['x', 'W', 'B'], ['conv'], pads=[1, 1, 1, 1]),
        node('GroupNormalization', ['conv', 'gn_scale', 'gn_bias'], ['gn'], num_groups=2, epsilon=1e-5),
        node('Gelu', ['gn'], ['gelu']),
        node('ReduceMean', ['gelu', 'axes'], ['mean'], keepdims=1),
        node('Split', ['mean'], ['s0', 's1', 's2'], axis=1, num_outputs=3),
        node('Concat', ['s2', 's0', 's1'], ['cat'], axis=1),
        node('Pad', ['cat', 'pads', '', 'pad_axes'], ['padded'], mode='wrap'),
        node('Resize', ['padded', '', '', 'sizes'], ['y'], mode='linear', axes=[2, 3],
             keep_aspect_ratio_policy='not_larger'),
    ]
    inits = [f32('W', rng.standard_normal((8, 4, 3, 3)) * 0.2), f32('B', rng.standard_normal(8) * 0.1),
             f32('gn_scale', rng.uniform(0.5, 1.5, 8)), f32('gn_bias', rng.standard_normal(8) * 0.1),
             i64('axes', [-1]), i64('pads', [1, 1]), i64('pad_axes', [-2]), i64('sizes', [20, 3])]
    w.case('exporter_21_conv_gn_gelu_reduce_split_concat', 21, nodes, {'x': x}, np.float32, inits, threads=(1, 2))
    return w.cases[-1]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    w = Writer(out)
    reduce_cases(w)
    split_cases(w)
    pad_cases(w)
    resize_cases(w)
    scatter_cases(w)
    pool_cases(w)
    cast_cases(w)
    qdq_cases(w)
    grid_cases(w)
    dft_cases(w)
    activation_bitwise_cases(w)
    norm_col2im_crop_cases(w)
    deform_conv_cases(w)
    opset21_cases(w)
    exporter = exporter_case(w)
    # A model past edgemm's opsets: it must be refused with a clear message.
    path, _ = w.model('unsupported_opset22', 22, [node('Relu', ['x'])], {'x': np.zeros((2,), np.float32)},
                      [('y', np.float32)])
    w.finish({'inspect': {'case': exporter['name'], 'model': exporter['model'], 'inputs': exporter['inputs'],
                          'opset': 21,
                          'ops': ['Conv', 'GroupNormalization', 'Gelu', 'ReduceMean', 'Split', 'Concat', 'Pad',
                                  'Resize']},
              'unsupported': {'model': path, 'opset': 22}})


if __name__ == '__main__':
    main()
