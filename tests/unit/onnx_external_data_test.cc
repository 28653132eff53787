// Weights left in their files: external tensor data (large aligned ranges mapped in place as
// file-backed pages, others read), and the raw_data of a model file's own large initializers cut
// out of what protobuf parses (ir/onnx_wire.h). Models still run to hand-computed results, and a
// mapping goes with the last tensor using it.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <tuple>

#include "edgemm/inferencer.h"
#include "ir/onnx_import.h"
#include "ir/onnx_wire.h"
#include "model_builder.h"

namespace edgemm {
namespace onnx_external_data_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;
using testing::ModelBuilder;

constexpr int64_t kRows = 512, kCols = 1024;  // a 2 MiB float32 weight: mapped (>= 1 MiB)

/// Whether `p` lies in a mapping of a file whose path ends with `file_name` (/proc/self/maps).
bool mapped_from(const void* p, const std::string& file_name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto address = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    const auto dash = range.find('-');
    const uintptr_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (address >= start && address < end) {
      return path.size() >= file_name.size() &&
             path.compare(path.size() - file_name.size(), file_name.size(), file_name) == 0;
    }
  }
  return false;
}

/// The "Anonymous:" kB of the mapping holding `p` (/proc/self/smaps): pages copied out of the
/// file into this process; -1 when no mapping holds `p`.
int64_t anonymous_kb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const auto address = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  while (std::getline(smaps, line)) {
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find_first_not_of("0123456789abcdef") == dash) {
      inside = address >= std::stoull(line.substr(0, dash), nullptr, 16) &&
               address < std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
    } else if (inside && line.rfind("Anonymous:", 0) == 0) {
      return std::stoll(line.substr(10));
    }
  }
  return -1;
}

bool any_mapping_of(const std::string& file_name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() >= file_name.size() &&
        line.compare(line.size() - file_name.size(), file_name.size(), file_name) == 0) {
      return true;
    }
  }
  return false;
}

std::vector<float> seeded(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

void set_external(onnx::TensorProto* t, const std::string& location, int64_t offset, int64_t length) {
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                   {"offset", std::to_string(offset)},
                                   {"length", std::to_string(length)}}) {
    auto* kv = t->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  }
}

/// y = x + w for x, w [4], w's 16 bytes at `offset` of "w.bin" (`length` declared).
ModelBuilder add_external_w(int64_t offset, int64_t length) {
  ModelBuilder m;
  m.input("x", testing::kFloat, {4});
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y", testing::kFloat, {4});
  auto* t = m.model.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  set_external(t, "w.bin", offset, length);
  return m;
}

/// y = x · w + b with w [kRows, kCols] at `w_offset` of "weights.bin" and b [kCols] (small: read
/// into the proto) right after it. Returns the model's path.
std::string write_model(const fs::path& dir, const std::vector<float>& w, const std::vector<float>& b, int64_t w_offset,
                        int64_t w_length_delta = 0) {
  std::string data(static_cast<size_t>(w_offset), '\0');
  data.append(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
  const int64_t b_offset = static_cast<int64_t>(data.size());
  data.append(reinterpret_cast<const char*>(b.data()), b.size() * sizeof(float));
  std::ofstream(dir / "weights.bin", std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));

  ModelBuilder m;
  m.input("x", testing::kFloat, {2, kRows});
  m.node("MatMul", {"x", "w"}, {"xw"}, "matmul_w");
  m.node("Add", {"xw", "b"}, {"y"}, "add_b");
  m.output("y", testing::kFloat, {2, kCols});
  for (const auto& [name, dims, offset, length] :
       {std::tuple<std::string, std::vector<int64_t>, int64_t, int64_t>{
            "w", {kRows, kCols}, w_offset, kRows * kCols * 4 + w_length_delta},
        {"b", {kCols}, b_offset, kCols * 4}}) {
    auto* t = m.model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    set_external(t, "weights.bin", offset, length);
  }
  return m.save(dir / "model.onnx");
}

TEST(ExternalData, LargeAlignedTensorsAreMappedInPlaceAndRun) {
  const fs::path dir = testing::temp_dir("external_mapped");
  const auto w = seeded(kRows * kCols, 1), b = seeded(kCols, 2), x = seeded(2 * kRows, 3);
  const std::string path = write_model(dir, w, b, 0);
  {
    auto model = ir::import_onnx_file(path);
    ASSERT_TRUE(model.has_value()) << model.status().to_string();
    const Tensor& wt = model->graph.initializers.at("w");
    const Tensor& bt = model->graph.initializers.at("b");
    EXPECT_TRUE(mapped_from(wt.raw_data(), "weights.bin")) << "the 2 MiB weight was copied, not mapped";
    EXPECT_EQ(anonymous_kb(wt.raw_data()), 0) << "the mapping's pages were copied out of the page cache";
    EXPECT_FALSE(mapped_from(bt.raw_data(), "weights.bin")) << "a 4 KiB tensor is read, not mapped";
    EXPECT_EQ(std::memcmp(wt.raw_data(), w.data(), w.size() * 4), 0);
    EXPECT_EQ(std::memcmp(bt.raw_data(), b.data(), b.size() * 4), 0);
    ASSERT_EQ(model->external_data_files.size(), 1u);

    // Writes stay in this process (private copy-on-write mapping): the file keeps its bytes, and
    // only the written page is copied.
    Tensor writable = wt;
    writable.data<float>()[0] = 1234.0f;
    EXPECT_GT(anonymous_kb(wt.raw_data()), 0);
    EXPECT_LE(anonymous_kb(wt.raw_data()), 64);
    float on_disk = 0;
    std::ifstream(dir / "weights.bin", std::ios::binary).read(reinterpret_cast<char*>(&on_disk), 4);
    EXPECT_EQ(on_disk, w[0]);
  }
  EXPECT_FALSE(any_mapping_of("weights.bin")) << "the mapping outlived its tensors";

  InferencerConfig config;
  config.model_path = path;
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().to_string();
  auto out = (*inferencer)->run({{"x", Tensor::from_floats({2, kRows}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const float* y = (*out)[0].data<float>();
  double worst = 0;
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      double ref = b[static_cast<size_t>(c)];
      for (int64_t k = 0; k < kRows; ++k) {
        ref += double{x[static_cast<size_t>(r * kRows + k)]} * w[static_cast<size_t>(k * kCols + c)];
      }
      worst = std::max(worst, std::abs(ref - y[r * kCols + c]));
    }
  }
  EXPECT_LT(worst, 1e-3) << "MatMul + Add on mapped weights vs a double product";
}

TEST(ExternalData, UnalignedRangesAreReadIntoAlignedMemory) {
  const fs::path dir = testing::temp_dir("external_unaligned");
  const auto w = seeded(kRows * kCols, 4), b = seeded(kCols, 5);
  auto model = ir::import_onnx_file(write_model(dir, w, b, 4));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  const Tensor& wt = model->graph.initializers.at("w");
  EXPECT_FALSE(mapped_from(wt.raw_data(), "weights.bin"));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wt.raw_data()) % 64, 0u);
  EXPECT_EQ(std::memcmp(wt.raw_data(), w.data(), w.size() * 4), 0);
}

TEST(ExternalData, ALengthThatDisagreesWithTheShapeIsAnError) {
  const fs::path dir = testing::temp_dir("external_length");
  const auto w = seeded(kRows * kCols, 6), b = seeded(kCols, 7);
  auto model = ir::import_onnx_file(write_model(dir, w, b, 0, -4));
  ASSERT_FALSE(model.has_value());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(model.status().message().find("tensor 'w'"), std::string::npos) << model.status().message();
  EXPECT_NE(model.status().message().find("but its external data holds 2097148 bytes"), std::string::npos)
      << model.status().message();
}

TEST(ExternalData, OffsetsAndLengthsAreWholeDecimalNumbers) {
  const fs::path dir = testing::temp_dir("external_numbers");
  std::ofstream(dir / "w.bin", std::ios::binary) << std::string(64 + 16, '\0');
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{{"offset", "0x40"},
                                                                                   {"offset", "64abc"},
                                                                                   {"offset", "1e2"},
                                                                                   {"offset", "-64"},
                                                                                   {"length", "-1"},
                                                                                   {"length", "16.0"},
                                                                                   {"offset", ""}}) {
    ModelBuilder m = add_external_w(64, 16);
    for (auto& kv : *m.model.mutable_graph()->mutable_initializer(0)->mutable_external_data()) {
      if (kv.key() == key) kv.set_value(value);
    }
    auto model = ir::import_onnx_file(m.save(dir / "m.onnx"));
    ASSERT_FALSE(model.has_value()) << key << " = '" << value << "' was taken";
    EXPECT_EQ(model.status().code(), StatusCode::kInvalidModel);
    EXPECT_NE(model.status().message().find("is not a non-negative decimal integer"), std::string::npos)
        << model.status().message();
  }
}

TEST(ExternalData, NoFileStaysOpenWhileTheModelLoads) {
  // 200 tensors in 200 files with room for 32 more open files than the process has: each file is
  // opened only to read it.
  const fs::path dir = testing::temp_dir("external_files");
  ModelBuilder m;
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) {
    const std::string name = "t" + std::to_string(i);
    const float value = static_cast<float>(i);
    std::ofstream(dir / (name + ".bin"), std::ios::binary).write(reinterpret_cast<const char*>(&value), 4);
    auto* t = m.model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(1);
    set_external(t, name + ".bin", 0, 4);
    names.push_back(name);
  }
  auto* axis = m.node("Concat", names, {"y"})->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  m.output("y", testing::kFloat, {200});
  const std::string path = m.save(dir / "m.onnx");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  const auto open_now = std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator());
  low.rlim_cur = static_cast<rlim_t>(open_now + 32);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  auto model = ir::import_onnx_file(path);
  setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(model->graph.initializers.at(names[static_cast<size_t>(i)]).data<float>()[0], static_cast<float>(i));
  }
}

TEST(ExternalData, ALocationThatIsNotARegularFileIsNamedSo) {
  const fs::path dir = testing::temp_dir("external_fifo");
  ASSERT_EQ(::mkfifo((dir / "w.bin").c_str(), 0600), 0);
  auto model = ir::import_onnx_file(add_external_w(0, 16).save(dir / "m.onnx"));
  ASSERT_FALSE(model.has_value());
  EXPECT_EQ(model.status().code(), StatusCode::kIo);
  EXPECT_NE(model.status().message().find("is not a regular file"), std::string::npos) << model.status().message();
}

TEST(ExternalData, ShapesOnlyImportReadsNoWeights) {
  const fs::path dir = testing::temp_dir("external_shapes");
  const auto w = seeded(kRows * kCols, 8), b = seeded(kCols, 9);
  auto model = ir::import_onnx_file_shapes_only(write_model(dir, w, b, 0));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  EXPECT_EQ(model->graph.initializers.at("w").raw_data(), nullptr);
  EXPECT_EQ(model->graph.initializers.at("w").shape(), (Shape{kRows, kCols}));
  EXPECT_FALSE(any_mapping_of("weights.bin"));
}

onnx::TensorProto* raw_initializer(ModelBuilder& m, const std::string& name, int data_type,
                                   const std::vector<int64_t>& dims, const std::string& raw) {
  auto* t = m.model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(data_type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(raw);
  return t;
}

std::string seeded_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(OnnxWire, CutsLargeRawDataAndKeepsEverythingElse) {
  ModelBuilder m;
  m.model.set_doc_string("kept");
  m.input("x", testing::kFloat, {1, 4});
  m.node("Identity", {"x"}, {"y"});
  m.output("y", testing::kFloat, {1, 4});
  const std::string big = seeded_bytes(4096, 1), small = seeded_bytes(1024, 2), ints = seeded_bytes(4096, 3);
  raw_initializer(m, "big", onnx::TensorProto::FLOAT, {1024}, big);
  raw_initializer(m, "small", onnx::TensorProto::FLOAT, {256}, small);
  raw_initializer(m, "ints", onnx::TensorProto::INT64, {512}, ints);
  m.initializer_floats("typed", {2}, {1.5f, 2.5f});
  auto* located = raw_initializer(m, "located", onnx::TensorProto::FLOAT, {1024}, big);
  located->set_data_location(onnx::TensorProto::EXTERNAL);  // with raw_data: the checker refuses it
  raw_initializer(m, "big_too", onnx::TensorProto::UINT8, {4096}, ints);
  raw_initializer(m, "typed_too", onnx::TensorProto::FLOAT, {1024}, big)->add_float_data(1.0f);
  const std::string file = m.model.SerializeAsString();

  const auto stripped = ir::strip_initializer_raw_data(file, 4096);
  ASSERT_TRUE(stripped.has_value());
  ASSERT_EQ(stripped->raw_data.size(), 2u) << "cut: big and big_too (not small, int64, typed, located or typed_too)";
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(stripped->bytes));
  const std::string expected_raw[] = {big, ints};
  const int expected_index[] = {0, 5};
  for (size_t i = 0; i < 2; ++i) {
    const ir::RawDataInFile& cut = stripped->raw_data[i];
    EXPECT_EQ(cut.initializer, expected_index[i]);
    EXPECT_EQ(file.substr(static_cast<size_t>(cut.offset), static_cast<size_t>(cut.length)), expected_raw[i]);
    EXPECT_FALSE(parsed.graph().initializer(cut.initializer).has_raw_data());
  }
  // With the cut raw_data put back, the parsed model is the original, field for field.
  for (size_t i = 0; i < 2; ++i) {
    parsed.mutable_graph()->mutable_initializer(expected_index[i])->set_raw_data(expected_raw[i]);
  }
  EXPECT_EQ(parsed.SerializeAsString(), file);
}

TEST(OnnxWire, WalksOnlyWhatProtobufParses) {
  ModelBuilder m;
  m.input("x", testing::kFloat, {1, 4});
  m.node("Identity", {"x"}, {"y"});
  m.output("y", testing::kFloat, {1, 4});
  raw_initializer(m, "big", onnx::TensorProto::FLOAT, {1024}, seeded_bytes(4096, 4));
  const std::string file = m.model.SerializeAsString();
  int walked = 0;
  for (size_t cut = 0; cut <= file.size(); cut += 7) {
    const std::string prefix = file.substr(0, cut);
    const auto stripped = ir::strip_initializer_raw_data(prefix, 1024);
    if (!stripped) continue;
    ++walked;
    onnx::ModelProto a, b;
    EXPECT_EQ(a.ParseFromString(stripped->bytes), b.ParseFromString(prefix)) << "cut at " << cut;
  }
  EXPECT_GT(walked, 0);
  EXPECT_FALSE(ir::strip_initializer_raw_data(std::string("\x3a\xff\xff\xff\xff\x0f", 6), 1).has_value());
  EXPECT_FALSE(ir::strip_initializer_raw_data(std::string("\x0b", 1), 1).has_value()) << "a group";
  EXPECT_FALSE(ir::strip_initializer_raw_data(file + file, 1024).has_value()) << "the graph given twice";
  // Field 5 (an initializer) in a tag beyond 32 bits: protobuf keeps the low 32 bits and reads
  // an initializer; the walker must not count it as another field.
  EXPECT_FALSE(ir::strip_initializer_raw_data(std::string("\x3a\x07\xaa\x80\x80\x80\x10\x01\x00", 9), 1).has_value());
}

TEST(OnnxWire, AModelsOwnLargeWeightsAreReadFromItsFile) {
  const fs::path dir = testing::temp_dir("wire_inline");
  const auto w = seeded(kRows * kCols, 10), x = seeded(2 * kRows, 11), v = seeded(kRows * kCols, 12);
  const auto small = seeded(kCols, 13);
  const auto bytes_of = [](const std::vector<float>& f) {
    return std::string(reinterpret_cast<const char*>(f.data()), f.size() * 4);
  };
  // y = x · w + b; the unused v and u (small) interleave with them, so that a wrong index in the
  // cut's bookkeeping shows; w carries a stale external_data entry, which a DEFAULT tensor's
  // readers ignore.
  ModelBuilder m;
  m.input("x", testing::kFloat, {2, kRows});
  m.node("MatMul", {"x", "w"}, {"xw"}, "matmul_w");
  m.node("Add", {"xw", "b"}, {"y"}, "add_b");
  m.output("y", testing::kFloat, {2, kCols});
  raw_initializer(m, "u", onnx::TensorProto::FLOAT, {kCols}, bytes_of(small));
  auto* wp = raw_initializer(m, "w", onnx::TensorProto::FLOAT, {kRows, kCols}, bytes_of(w));
  auto* stale = wp->add_external_data();
  stale->set_key("location");
  stale->set_value("/etc/shadow");
  raw_initializer(m, "b", onnx::TensorProto::FLOAT, {kCols}, bytes_of(small));
  raw_initializer(m, "v", onnx::TensorProto::FLOAT, {kRows, kCols}, bytes_of(v));
  // Pad the doc string until w's bytes start on a 64-byte boundary of the file: w is mapped.
  for (int pad = 0;; ++pad) {
    m.model.set_doc_string(std::string(1 + pad, 'p'));
    const auto cut = ir::strip_initializer_raw_data(m.model.SerializeAsString(), 1 << 20);
    ASSERT_TRUE(cut.has_value());
    ASSERT_EQ(cut->raw_data.size(), 2u);
    if (cut->raw_data[0].offset % 64 == 0) break;
    ASSERT_LT(pad, 64);
  }
  const std::string path = m.save(dir / "inline.onnx");
  {
    auto model = ir::import_onnx_file(path);
    ASSERT_TRUE(model.has_value()) << model.status().to_string();
    const auto& init = model->graph.initializers;
    EXPECT_EQ(std::memcmp(init.at("w").raw_data(), w.data(), w.size() * 4), 0);
    EXPECT_EQ(std::memcmp(init.at("v").raw_data(), v.data(), v.size() * 4), 0);
    EXPECT_EQ(std::memcmp(init.at("b").raw_data(), small.data(), small.size() * 4), 0);
    EXPECT_EQ(std::memcmp(init.at("u").raw_data(), small.data(), small.size() * 4), 0);
    EXPECT_TRUE(mapped_from(init.at("w").raw_data(), "inline.onnx")) << "w starts 64-byte aligned: mapped";
    EXPECT_EQ(anonymous_kb(init.at("w").raw_data()), 0);
    EXPECT_TRUE(model->external_data_files.empty()) << "the model file itself is not external data";
  }
  InferencerConfig config;
  config.model_path = path;
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().to_string();
  auto out = (*inferencer)->run({{"x", Tensor::from_floats({2, kRows}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  double worst = 0;
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      double ref = small[static_cast<size_t>(c)];
      for (int64_t k = 0; k < kRows; ++k) {
        ref += double{x[static_cast<size_t>(r * kRows + k)]} * w[static_cast<size_t>(k * kCols + c)];
      }
      worst = std::max(worst, std::abs(ref - (*out)[0].data<float>()[r * kCols + c]));
    }
  }
  EXPECT_LT(worst, 1e-3);

  // A weight whose raw_data is shorter than its shape: the same error as before the cut.
  wp->mutable_raw_data()->resize(w.size() * 4 - 4);
  auto bad = ir::import_onnx_file(m.save(dir / "short.onnx"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(bad.status().message().find("tensor 'w'"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("but holds 2097148 bytes"), std::string::npos) << bad.status().message();
}

}  // namespace onnx_external_data_test
}  // namespace edgemm
