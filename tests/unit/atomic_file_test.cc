// Outputs written whole or not at all (edgemm/atomic_file.h): the destination keeps its old content
// until commit(); a failed or abandoned write leaves it and no temporary; links keep pointing at
// the replaced file; devices are written in place; registered temporaries are removed on demand.
// Expected contents are the bytes each test writes.
#include "edgemm/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model_builder.h"

namespace edgemm {
namespace atomic_file_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The entries of `dir` other than `keep`.
std::vector<std::string> others(const fs::path& dir, const std::string& keep) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() != keep) names.push_back(e.path().filename().string());
  }
  return names;
}

TEST(AtomicFile, DestinationKeepsOldContentUntilCommit) {
  const fs::path dir = testing::temp_dir("atomic_commit");
  const fs::path path = dir / "out.txt";
  ASSERT_TRUE(write_file_atomically(path.string(), "old").is_ok());
  auto file = AtomicFile::create(path.string());
  ASSERT_TRUE(file.has_value()) << file.status().to_string();
  file->write("new content");
  EXPECT_EQ(read_all(path), "old");
  ASSERT_TRUE(file->commit().is_ok());
  EXPECT_EQ(read_all(path), "new content");
  EXPECT_TRUE(others(dir, "out.txt").empty());
  fs::remove_all(dir);
}

TEST(AtomicFile, AbandonedOrFailedWriteLeavesTheOldFileAndNoTemporary) {
  const fs::path dir = testing::temp_dir("atomic_abandon");
  const fs::path path = dir / "out.txt";
  ASSERT_TRUE(write_file_atomically(path.string(), "old").is_ok());
  {
    auto file = AtomicFile::create(path.string());
    ASSERT_TRUE(file.has_value());
    file->write("half");
  }  // destroyed without commit, as on an error return
  EXPECT_EQ(read_all(path), "old");
  EXPECT_TRUE(others(dir, "out.txt").empty());
  fs::create_directory(dir / "folder");
  const Status onto_folder = write_file_atomically((dir / "folder").string(), "x");
  EXPECT_EQ(onto_folder.code(), StatusCode::kIo);
  EXPECT_NE(onto_folder.message().find("folder"), std::string::npos) << onto_folder.message();
  EXPECT_EQ(others(dir, "out.txt"), std::vector<std::string>{"folder"});
  const Status missing = write_file_atomically((dir / "none" / "x.txt").string(), "x");
  EXPECT_EQ(missing.code(), StatusCode::kIo);
  fs::remove_all(dir);
}

TEST(AtomicFile, LinkKeepsPointingAtTheReplacedFile) {
  const fs::path dir = testing::temp_dir("atomic_link");
  ASSERT_TRUE(write_file_atomically((dir / "target.txt").string(), "old").is_ok());
  fs::create_symlink("target.txt", dir / "link.txt");
  ASSERT_TRUE(write_file_atomically((dir / "link.txt").string(), "new").is_ok());
  EXPECT_TRUE(fs::is_symlink(dir / "link.txt"));
  EXPECT_EQ(read_all(dir / "target.txt"), "new");
  fs::remove_all(dir);
}

TEST(AtomicFile, DeviceIsWrittenInPlace) {
  ASSERT_TRUE(write_file_atomically("/dev/null", "discarded").is_ok());
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(AtomicFile, RegisteredTemporariesAreRemoved) {
  const fs::path dir = testing::temp_dir("atomic_registry");
  fs::create_directories(dir / "staging" / "sub");
  std::ofstream(dir / "staging" / "sub" / "f") << "x";
  register_temporary((dir / "staging").string());
  auto file = AtomicFile::create((dir / "out.txt").string());
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(remove_temporaries(), 2);  // the staging folder and the file's temporary
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_EQ(file->commit().code(), StatusCode::kIo);  // its temporary is gone: nothing appears
  EXPECT_FALSE(fs::exists(dir / "out.txt"));
  fs::remove_all(dir);
}

}  // namespace atomic_file_test
}  // namespace edgemm
