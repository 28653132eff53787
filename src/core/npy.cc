#include "edgemm/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "edgemm/atomic_file.h"

namespace edgemm {

namespace {

struct DescrEntry {
  const char* descr;
  DataType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"<f4", DataType::kFloat32}, {"<f8", DataType::kFloat64}, {"<f2", DataType::kFloat16}, {"|i1", DataType::kInt8},
    {"<i2", DataType::kInt16},   {"<i4", DataType::kInt32},   {"<i8", DataType::kInt64},   {"|u1", DataType::kUInt8},
    {"<u2", DataType::kUInt16},  {"<u4", DataType::kUInt32},  {"<u8", DataType::kUInt64},  {"|b1", DataType::kBool},
};

Status bad(const std::string& path, const std::string& why) {
  return make_error(StatusCode::kInvalidArgument, "'" + path + "' is not a usable .npy file: " + why);
}

/// Value of `key` in the header dict, as the raw text up to the next top-level comma/brace.
std::string dict_value(const std::string& header, const std::string& key) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  auto colon = header.find(':', k);
  if (colon == std::string::npos) return "";
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  if (i < header.size() && header[i] == '(') {
    auto close = header.find(')', i);
    return close == std::string::npos ? "" : header.substr(i, close - i + 1);
  }
  size_t end = i;
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(i, end - i);
}

}  // namespace

Expected<Tensor> read_npy(const std::string& path) {
  if (path == "-") {
    return make_error(StatusCode::kInvalidArgument,
                      "a .npy tensor cannot be read from standard input ('-'): give a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(StatusCode::kIo, "cannot open '" + path + "'");
  char magic[8] = {};
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) return bad(path, "missing the \\x93NUMPY magic");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (b[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return bad(path, "unknown format version " + std::to_string(magic[6]));
  }
  if (!in || header_len > (1u << 20)) return bad(path, "header is truncated or absurdly long");
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  if (!in) return bad(path, "header is truncated");
  std::string descr = dict_value(header, "descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);
  if (descr == "<b1" || descr == "<u1" || descr == "<i1") descr[0] = '|';
  DataType dtype = DataType::kUndefined;
  for (const auto& e : kDescrs) {
    if (descr == e.descr) dtype = e.dtype;
  }
  if (dtype == DataType::kUndefined) return bad(path, "dtype '" + descr + "' is not supported");
  if (dict_value(header, "fortran_order").find("True") != std::string::npos) {
    return bad(path, "Fortran order is not supported (save with C order)");
  }
  std::string shape_text = dict_value(header, "shape");
  if (shape_text.size() < 2) return bad(path, "no shape in header");
  Shape shape;
  std::stringstream ss(shape_text.substr(1, shape_text.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(item));
    } catch (const std::exception&) {
      return bad(path, "shape '" + shape_text + "' is not a tuple of integers");
    }
  }
  auto t = Tensor::create(dtype, shape);
  if (!t) return Status(t.status().code(), "'" + path + "': " + t.status().message());
  in.read(static_cast<char*>(t->raw_data()), static_cast<std::streamsize>(t->byte_size()));
  if (static_cast<size_t>(in.gcount()) != t->byte_size()) {
    return bad(path, "data is truncated (expected " + std::to_string(t->byte_size()) + " bytes for shape " +
                         shape_to_string(shape) + ")");
  }
  return t;
}

Status write_npy(const std::string& path, const Tensor& tensor) {
  const char* descr = nullptr;
  for (const auto& e : kDescrs) {
    if (e.dtype == tensor.dtype()) descr = e.descr;
  }
  if (descr == nullptr) {
    return make_error(StatusCode::kInvalidArgument,
                      std::string("cannot write dtype ") + dtype_name(tensor.dtype()) + " to .npy");
  }
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(tensor.shape()[i]);
  shape += tensor.shape().size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  EDGEMM_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::create(path));
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(header);
  out.write(tensor.raw_data(), tensor.byte_size());
  return out.commit();
}

}  // namespace edgemm
