// EmbeddingIndex (file format in docs/clip.md, "Index format") and sha256 (FIPS 180-4).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "edgemm/atomic_file.h"
#include "edgemm/pipelines/clip.h"

namespace edgemm::clip {
namespace {

constexpr char kMagic[8] = {'E', 'D', 'G', 'E', 'M', 'M', 'I', 'X'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kMaxHeaderBytes = 1u << 30;

class Sha256 {
 public:
  void update(const uint8_t* data, size_t n) {
    bytes_ += n;
    while (n > 0) {
      const size_t take = std::min(n, size_t{64} - fill_);
      std::memcpy(block_ + fill_, data, take);
      fill_ += take;
      data += take;
      n -= take;
      if (fill_ == 64) {
        compress(block_);
        fill_ = 0;
      }
    }
  }
  std::string hex() {
    const uint64_t bits = bytes_ * 8;
    const uint8_t pad = 0x80, zero = 0;
    update(&pad, 1);
    while (fill_ != 56) update(&zero, 1);
    uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    update(length, 8);
    static const char* kHex = "0123456789abcdef";
    std::string out;
    for (uint32_t word : h_) {
      for (int i = 28; i >= 0; i -= 4) out += kHex[(word >> i) & 15];
    }
    return out;
  }

 private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress(const uint8_t* p) {
    static constexpr uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      w[i] = uint32_t{p[4 * i]} << 24 | uint32_t{p[4 * i + 1]} << 16 | uint32_t{p[4 * i + 2]} << 8 | p[4 * i + 3];
    }
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
  }
  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t block_[64];
  size_t fill_ = 0;
  uint64_t bytes_ = 0;
};

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

Expected<std::string> sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIo, "cannot open '" + path + "' to compute its sha256");
  Sha256 sha;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    sha.update(reinterpret_cast<const uint8_t*>(buffer.data()), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status(StatusCode::kIo, "cannot read '" + path + "' to compute its sha256");
  return sha.hex();
}

EmbeddingIndex EmbeddingIndex::for_model(const ClipModel& model) {
  EmbeddingIndex index;
  index.model_id = model.config().model_id;
  index.vision_model_sha256 = model.vision_model_sha256();
  index.dim = model.embedding_dim();
  return index;
}

Status EmbeddingIndex::add(const Tensor& embeddings, const std::vector<std::string>& row_paths) {
  if (embeddings.dtype() != DataType::kFloat32 || embeddings.rank() != 2 || embeddings.dim(1) != dim) {
    return Status(StatusCode::kInvalidArgument, "index of dim " + std::to_string(dim) + " takes float32 [N, " +
                                                    std::to_string(dim) + "] embeddings, got " +
                                                    shape_to_string(embeddings.shape()));
  }
  if (embeddings.dim(0) != static_cast<int64_t>(row_paths.size())) {
    return Status(StatusCode::kInvalidArgument,
                  std::to_string(embeddings.dim(0)) + " embeddings but " + std::to_string(row_paths.size()) + " paths");
  }
  vectors.insert(vectors.end(), embeddings.data<float>(), embeddings.data<float>() + embeddings.element_count());
  paths.insert(paths.end(), row_paths.begin(), row_paths.end());
  return Status::ok();
}

Status EmbeddingIndex::save(const std::string& path) const {
  if (vectors.size() != paths.size() * static_cast<size_t>(dim)) {
    return Status(StatusCode::kInternal, "index holds " + std::to_string(vectors.size()) + " floats for " +
                                             std::to_string(paths.size()) + " paths of dim " + std::to_string(dim));
  }
  const nlohmann::json header = {
      {"model_id", model_id}, {"vision_model_sha256", vision_model_sha256}, {"dim", dim}, {"count", paths.size()}};
  const std::string json = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string head(kMagic, sizeof(kMagic));
  put_u32(head, kVersion);
  put_u32(head, static_cast<uint32_t>(json.size()));
  head += json;
  // Paths as raw bytes (uint32 length + bytes each): file names need not be UTF-8.
  for (const std::string& p : paths) {
    put_u32(head, static_cast<uint32_t>(p.size()));
    head += p;
  }
  EDGEMM_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::create(path));
  out.write(head);
  static_assert(sizeof(float) == 4);
  out.write(vectors.data(), vectors.size() * 4);
  return out.commit();
}

Expected<EmbeddingIndex> EmbeddingIndex::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Status(StatusCode::kIo, "cannot open index '" + path + "': " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  in.seekg(0);
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument, "index '" + path + "' " + what);
  };
  std::streamoff left = size;  // bytes not yet read
  char head[16];
  if (size < 16 || !in.read(head, 16) || std::memcmp(head, kMagic, 8) != 0) {
    return bad("is not an edgemm embedding index (no EDGEMMIX header; make one with `edgemm retrieve --index`)");
  }
  left -= 16;
  if (get_u32(head + 8) != kVersion) {
    return bad("has version " + std::to_string(get_u32(head + 8)) + "; this edgemm reads version 1");
  }
  const uint32_t header_bytes = get_u32(head + 12);
  if (header_bytes > kMaxHeaderBytes || static_cast<std::streamoff>(header_bytes) > left) {
    return bad("is truncated: its header claims " + std::to_string(header_bytes) + " bytes");
  }
  std::string json(header_bytes, '\0');
  if (!in.read(json.data(), header_bytes)) return bad("cannot be read");
  left -= header_bytes;
  const nlohmann::json h = nlohmann::json::parse(json, nullptr, false);
  EmbeddingIndex index;
  int64_t count = 0;
  try {
    if (h.is_discarded() || !h.is_object()) return bad("has a malformed JSON header");
    index.model_id = h.at("model_id").get<std::string>();
    index.vision_model_sha256 = h.at("vision_model_sha256").get<std::string>();
    index.dim = h.at("dim").get<int>();
    count = h.at("count").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    return bad(std::string("has an invalid header: ") + e.what());
  }
  if (index.dim <= 0 || count < 0 || count > left / 4) {
    return bad("has an impossible header (dim " + std::to_string(index.dim) + ", count " + std::to_string(count) + ")");
  }
  for (int64_t i = 0; i < count; ++i) {
    char length[4];
    if (left < 4 || !in.read(length, 4)) return bad("is truncated in its path list");
    const uint32_t n = get_u32(length);
    left -= 4;
    if (static_cast<std::streamoff>(n) > left) return bad("is truncated in its path list");
    std::string p(n, '\0');
    if (!in.read(p.data(), n)) return bad("cannot be read");
    left -= n;
    index.paths.push_back(std::move(p));
  }
  const std::streamoff floats = static_cast<std::streamoff>(count) * index.dim;
  if (left != floats * 4) {
    return bad("holds " + std::to_string(left) + " bytes of vectors; its header says " + std::to_string(count) + " × " +
               std::to_string(index.dim) + " float32 (truncated?)");
  }
  index.vectors.resize(static_cast<size_t>(floats));
  if (!in.read(reinterpret_cast<char*>(index.vectors.data()), floats * 4)) return bad("cannot be read");
  return index;
}

Status EmbeddingIndex::check_model(const ClipModel& model) const {
  if (model.vision_model_sha256().empty()) {
    return Status(StatusCode::kIo, "cannot check that the index was made by model '" + model.config().model_id +
                                       "': its vision model file is missing (" + model.vision_model_path() + ")");
  }
  if (vision_model_sha256 != model.vision_model_sha256() || dim != model.embedding_dim()) {
    return Status(StatusCode::kInvalidArgument,
                  "the index was made by another model: index model '" + model_id + "' (vision model sha256 " +
                      vision_model_sha256 + ", dim " + std::to_string(dim) + "), loaded model '" +
                      model.config().model_id + "' (sha256 " + model.vision_model_sha256() + ", dim " +
                      std::to_string(model.embedding_dim()) + "); rebuild the index with this model");
  }
  return Status::ok();
}

Expected<std::vector<Match>> EmbeddingIndex::search(const std::vector<float>& query, int top_k) const {
  if (top_k < 1) return Status(StatusCode::kInvalidArgument, "top_k must be at least 1, got " + std::to_string(top_k));
  if (static_cast<int>(query.size()) != dim) {
    return Status(StatusCode::kInvalidArgument, "query has " + std::to_string(query.size()) +
                                                    " values; the index holds vectors of " + std::to_string(dim));
  }
  std::vector<Match> all(paths.size());
  for (size_t r = 0; r < paths.size(); ++r) {
    const float* v = vectors.data() + r * dim;
    double dot = 0;
    for (int i = 0; i < dim; ++i) dot += double(v[i]) * query[i];
    all[r] = {static_cast<int64_t>(r), paths[r], static_cast<float>(dot)};
  }
  const size_t k = std::min(all.size(), static_cast<size_t>(top_k));
  std::partial_sort(
      all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
      [](const Match& a, const Match& b) { return a.score != b.score ? a.score > b.score : a.index < b.index; });
  all.resize(k);
  return all;
}

}  // namespace edgemm::clip
