#pragma once
/// \file npy.h
/// NumPy .npy files (format version 1.0/2.0, little-endian, C order), as specified in
/// numpy/lib/format.py ("NPY format"). Used by `edgemm run` and the parity tests.

#include <string>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm {

/// Reads an .npy file. Supported descr: <f4 <f8 <f2 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 |b1 |i1 |u1.
/// Errors: kIo (unreadable), kInvalidArgument ("-", standard input, is not read; bad header, Fortran order, big-endian,
/// data shorter than the header says, unsupported dtype).
Expected<Tensor> read_npy(const std::string& path);

/// Writes a tensor as .npy (version 1.0), whole or not at all (core/atomic_file.h). Errors: kIo.
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace edgemm
