// External tensor data: large aligned ranges are mapped in place (file-backed pages, no copy),
// others are read; the model still runs to the hand-computed result, and the mapping goes with
// the last tensor using it.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "edgemm/inferencer.h"
#include "ir/onnx_import.h"
#include "model_builder.h"

namespace edgemm {
namespace {

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
    EXPECT_FALSE(mapped_from(bt.raw_data(), "weights.bin")) << "a 4 KiB tensor is read, not mapped";
    EXPECT_EQ(std::memcmp(wt.raw_data(), w.data(), w.size() * 4), 0);
    EXPECT_EQ(std::memcmp(bt.raw_data(), b.data(), b.size() * 4), 0);
    ASSERT_EQ(model->external_data_files.size(), 1u);

    // Writes stay in this process (private copy-on-write mapping): the file keeps its bytes.
    Tensor writable = wt;
    writable.data<float>()[0] = 1234.0f;
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
  EXPECT_NE(model.status().message().find("external data holds 2097148 bytes"), std::string::npos)
      << model.status().message();
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

}  // namespace
}  // namespace edgemm
