#pragma once
/// \file npy.h
/// NumPy .npy files (format version 1.0/2.0, little-endian, C order), as specified in
/// numpy/lib/format.py ("NPY format"): tensors in and out of `edgemm run`, calibration and
/// verification data of `edgemm convert` / `quantize`, and the parity tests' references.

#include <string>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm {

/// Reads an .npy file. Supported descr: <f4 <f8 <f2 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 |b1 |i1 |u1.
/// Errors: kIo (unreadable), kInvalidArgument ("-", standard input, is not read; bad header, Fortran order, big-endian,
/// data shorter than the header says, unsupported dtype).
Expected<Tensor> read_npy(const std::string& path);

/// Writes a tensor as .npy (version 1.0), whole or not at all (a temporary file renamed into
/// place). Errors: kIo.
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace edgemm
