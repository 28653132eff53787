// Core types: Status codes and exit codes, Tensor creation limits, long-lived tensors (zeroed,
// aligned, their pages handed back when freed, read from /proc), fp16/bf16 conversion
// (hand-computed IEEE values), .npy round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/long_lived_memory.h"
#include "edgemm/npy.h"
#include "edgemm/process_memory.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm {
namespace core_test {  // named for the file: unity batches merge anonymous namespaces

TEST(Status, OkIsCheapAndPrintable) {
  Status ok;
  EXPECT_TRUE(ok.is_ok());
  EXPECT_EQ(ok.to_string(), "OK");
  EXPECT_EQ(exit_code(ok), 0);
  Status err(StatusCode::kInvalidModel, "bad graph");
  EXPECT_FALSE(err.is_ok());
  EXPECT_EQ(err.to_string(), "InvalidModel: bad graph");
  EXPECT_EQ(exit_code(err), 3);
}

TEST(Tensor, CreateRefusesNegativeAndHugeShapes) {
  auto neg = Tensor::create(DataType::kFloat32, {2, -1});
  ASSERT_FALSE(neg.has_value());
  EXPECT_EQ(neg.status().code(), StatusCode::kInvalidArgument);
  auto huge = Tensor::create(DataType::kFloat32, {1 << 20, 1 << 20, 1 << 10});
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.status().code(), StatusCode::kOutOfMemory);
  auto overflow = Tensor::create(DataType::kInt64, {int64_t{1} << 40, int64_t{1} << 40});
  ASSERT_FALSE(overflow.has_value());
  EXPECT_EQ(overflow.status().code(), StatusCode::kOutOfMemory);
  auto strings = Tensor::create(DataType::kString, {2});
  EXPECT_FALSE(strings.has_value());
}

TEST(Tensor, CreateZeroFillsAndClones) {
  auto t = Tensor::create(DataType::kFloat32, {2, 3});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->element_count(), 6);
  EXPECT_EQ(t->byte_size(), 24u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->data<float>()[i], 0.0f);
  t->data<float>()[4] = 7.5f;
  auto c = t->clone();
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->raw_data(), t->raw_data());
  EXPECT_EQ(c->data<float>()[4], 7.5f);
}

TEST(Tensor, LongLivedTensorsAreZeroedAlignedAndGiveTheirPagesBack) {
  for (const Shape& shape : {Shape{3, 5}, Shape{0}, Shape{64, 1024, 1024}}) {  // heap, empty, 256 MiB mapped
    auto t = core::create_long_lived_tensor(DataType::kFloat32, shape);
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    EXPECT_EQ(t->shape(), shape);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % 64, 0u);
    const float* v = t->data<float>();
    for (int64_t i = 0; i < t->element_count(); i += 4099) ASSERT_EQ(v[i], 0.0f) << i;
  }
  // A freed large tensor's pages leave the process at once, whatever the heap's state.
  const int64_t before = read_process_memory().value().rss_bytes;
  {
    auto t = core::create_long_lived_tensor(DataType::kFloat32, {64, 1024, 1024});
    ASSERT_TRUE(t.has_value());
    std::fill(t->data<float>(), t->data<float>() + t->element_count(), 1.0f);
    EXPECT_GE(read_process_memory().value().rss_bytes, before + (200 << 20));
  }
  EXPECT_LE(read_process_memory().value().rss_bytes, before + (16 << 20));
  auto refused = core::create_long_lived_tensor(DataType::kFloat32, {int64_t{1} << 40});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kOutOfMemory);
}

TEST(Tensor, DataChecksTheElementTypeInCheckedBuilds) {
  auto t = Tensor::create(DataType::kFloat32, {4});
  ASSERT_TRUE(t.has_value());
  // Always allowed: the dtype's own type, bytes, and the unsigned integer of the element's width.
  EXPECT_NE(t->data<float>(), nullptr);
  EXPECT_NE(t->data<char>(), nullptr);
  EXPECT_NE(t->data<uint32_t>(), nullptr);
#if !defined(NDEBUG) || defined(EDGEMM_CHECK_DTYPES)
  EXPECT_DEATH(t->data<int32_t>(), "int32_t on a float32 tensor");
  EXPECT_DEATH(t->data<uint16_t>(), "uint16_t on a float32 tensor");
  EXPECT_DEATH(t->data<double>(), "double on a float32 tensor");
#else
  GTEST_SKIP() << "release build: Tensor::data<T>() does not check T";
#endif
}

TEST(Half, KnownValues) {
  // IEEE binary16: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF, smallest subnormal 2^-24 = 0x0001.
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(1e6f), 0x7C00);
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x0001), 5.9604645e-8f);
  // 1 + 2^-11 is halfway between 1.0 and 1 + 2^-10: ties to even gives 1.0.
  EXPECT_EQ(float_to_half(1.00048828125f), 0x3C00);
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3F80);
  EXPECT_EQ(bfloat16_to_float(0xC040), -3.0f);
}

TEST(Npy, RoundTripAndErrors) {
  const auto dir = std::filesystem::temp_directory_path() / "edgemm_npy_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.npy").string();
  Tensor t = Tensor::from_floats({2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(write_npy(path, t).is_ok());
  auto back = read_npy(path);
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  EXPECT_EQ(back->shape(), (Shape{2, 2}));
  EXPECT_EQ(back->data<float>()[3], 4.0f);

  const std::string truncated = (dir / "t.npy").string();
  std::filesystem::copy_file(path, truncated, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(path) - 4);
  auto bad = read_npy(truncated);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("truncated"), std::string::npos);

  const std::string junk = (dir / "j.npy").string();
  std::ofstream(junk) << "hello";
  EXPECT_FALSE(read_npy(junk).has_value());
  EXPECT_EQ(read_npy((dir / "missing.npy").string()).status().code(), StatusCode::kIo);
}

}  // namespace core_test
}  // namespace edgemm
