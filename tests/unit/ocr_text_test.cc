// CTC decoding and dictionary (src/pipelines/ocr/ctc.h) and OCR metrics
// (include/edgemm/pipelines/ocr_metrics.h) on hand-computed cases.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "pipelines/ocr/ctc.h"
#include "edgemm/pipelines/ocr_metrics.h"
#include "source_dir.h"

namespace edgemm::ocr {
namespace ocr_text_test {  // named for the file: unity batches merge anonymous namespaces

// Class table of the CTC tests: blank, "a", "b", "中".
const std::vector<std::string> kTable = {"", "a", "b", "中"};

// One [C] row whose argmax is `cls` with probability `p`; the rest shares 1 - p.
std::vector<float> row(int cls, float p) {
  std::vector<float> r(kTable.size(), (1.0f - p) / static_cast<float>(kTable.size() - 1));
  r[cls] = p;
  return r;
}

// Concatenated rows: a [T, C] matrix.
std::vector<float> matrix(const std::vector<std::vector<float>>& rows) {
  std::vector<float> m;
  for (const auto& r : rows) m.insert(m.end(), r.begin(), r.end());
  return m;
}

CtcLine decode(const std::vector<float>& probs) {
  Expected<CtcLine> line = ctc_greedy_decode(probs.data(), static_cast<int64_t>(probs.size() / kTable.size()),
                                             static_cast<int64_t>(kTable.size()), kTable);
  EXPECT_TRUE(line.has_value()) << line.status().to_string();
  return line.has_value() ? *line : CtcLine{"<error>", -1};
}

TEST(Ctc, MergesRepeatsDropsBlanksAndKeepsRepeatAcrossBlank) {
  // Argmax: a a blank a b 中 -> "aab中". The run "a a" contributes its first step's 0.875.
  const CtcLine line =
      decode(matrix({row(1, 0.875f), row(1, 0.75f), row(0, 0.5f), row(1, 0.625f), row(2, 0.5f), row(3, 0.75f)}));
  EXPECT_EQ(line.text, "aab中");
  EXPECT_EQ(line.score, (0.875f + 0.625f + 0.5f + 0.75f) / 4);  // 0.6875, exact in binary
}

TEST(Ctc, RepeatRunsStartingAfterBlankAndLeadingBlanks) {
  // blank blank b b blank blank b: "bb", kept steps 2 and 6.
  const CtcLine line = decode(
      matrix({row(0, 0.9f), row(0, 0.9f), row(2, 0.5f), row(2, 1.0f), row(0, 0.9f), row(0, 0.9f), row(2, 0.75f)}));
  EXPECT_EQ(line.text, "bb");
  EXPECT_EQ(line.score, 0.625f);
}

TEST(Ctc, AllBlankOrNoStepsGivesEmptyTextAndScoreZero) {
  CtcLine line = decode(matrix({row(0, 0.99f), row(0, 0.6f), row(0, 0.7f)}));
  EXPECT_EQ(line.text, "");
  EXPECT_EQ(line.score, 0.0f);
  line = decode({});
  EXPECT_EQ(line.text, "");
  EXPECT_EQ(line.score, 0.0f);
}

TEST(Ctc, TiesGoToTheLowestClassIndex) {
  // Rows tie a/b (-> a), blank/a (-> blank), a/b (-> a): "aa", both kept at 0.45.
  const CtcLine line = decode({0.1f, 0.45f, 0.45f, 0.0f, 0.4f, 0.4f, 0.2f, 0.0f, 0.1f, 0.45f, 0.45f, 0.0f});
  EXPECT_EQ(line.text, "aa");
  EXPECT_EQ(line.score, 0.45f);
}

TEST(Ctc, ClassCountMustMatchTheTable) {
  const std::vector<float> probs(10, 0.2f);
  Expected<CtcLine> line = ctc_greedy_decode(probs.data(), 2, 5, kTable);
  ASSERT_FALSE(line.has_value());
  EXPECT_EQ(line.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(line.status().message(), "CTC output has 5 classes but the dictionary table has 4 entries");
  EXPECT_EQ(ctc_greedy_decode(probs.data(), -1, 4, kTable).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ctc_greedy_decode(probs.data(), 1, 0, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Ctc, DecodesOneLineOfABatchTensor) {
  // [2, 2, 4]: line 0 = "中", line 1 = "ba".
  const std::vector<float> values = matrix({row(3, 0.5f), row(3, 0.5f), row(2, 0.5f), row(1, 1.0f)});
  const Tensor probs = Tensor::from_floats({2, 2, 4}, values);
  Expected<CtcLine> line = ctc_greedy_decode(probs, 1, kTable);
  ASSERT_TRUE(line.has_value()) << line.status().to_string();
  EXPECT_EQ(line->text, "ba");
  EXPECT_EQ(line->score, 0.75f);
  line = ctc_greedy_decode(probs, 0, kTable);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->text, "中");
  EXPECT_EQ(line->score, 0.5f);

  EXPECT_EQ(ctc_greedy_decode(probs, 2, kTable).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ctc_greedy_decode(probs, -1, kTable).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ctc_greedy_decode(Tensor::from_floats({4, 4}, matrix({row(1, 1), row(1, 1), row(1, 1), row(1, 1)})), 0, kTable)
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(ctc_greedy_decode(Tensor::from_int64s({1, 1, 4}, {0, 1, 2, 3}), 0, kTable).status().code(),
            StatusCode::kInvalidArgument);
}

// Class table with PP-OCR's trailing space class: blank, "a", "b", "中", " ".
const std::vector<std::string> kSpacedTable = {"", "a", "b", "中", " "};

CtcLine decode_spaced(const std::vector<std::vector<float>>& rows, float space_threshold) {
  const std::vector<float> probs = matrix(rows);
  Expected<CtcLine> line =
      ctc_greedy_decode(probs.data(), static_cast<int64_t>(rows.size()), 5, kSpacedTable, space_threshold);
  EXPECT_TRUE(line.has_value()) << line.status().to_string();
  return line.has_value() ? *line : CtcLine{"<error>", -1};
}

TEST(Ctc, SpaceThresholdPutsASpaceWhereABlankStepLeansToIt) {
  // a, blank (space 0.3), b: argmax decoding reads "ab"; with a threshold of 0.2 or 0.3, "a b".
  // The score stays that of the kept characters (the space adds none).
  const std::vector<std::vector<float>> rows = {
      {0.05f, 0.9f, 0.0f, 0.0f, 0.05f}, {0.6f, 0.05f, 0.05f, 0.0f, 0.3f}, {0.05f, 0.0f, 0.9f, 0.0f, 0.05f}};
  EXPECT_EQ(decode_spaced(rows, 1.0f).text, "ab");
  EXPECT_EQ(decode_spaced(rows, 0.35f).text, "ab");
  EXPECT_EQ(decode_spaced(rows, 0.3f).text, "a b");
  const CtcLine spaced = decode_spaced(rows, 0.2f);
  EXPECT_EQ(spaced.text, "a b");
  EXPECT_FLOAT_EQ(spaced.score, 0.9f);
}

TEST(Ctc, SpaceThresholdNeverSpacesChineseDoublesOrEdges) {
  const std::vector<float> leaning = {0.6f, 0.05f, 0.05f, 0.0f, 0.3f};  // blank, space 0.3
  // Next to a multi-byte character (中) no space is added.
  EXPECT_EQ(decode_spaced({{0.1f, 0.9f, 0.0f, 0.0f, 0.0f}, leaning, {0.1f, 0.0f, 0.0f, 0.9f, 0.0f}}, 0.2f).text, "a中");
  // Where the space itself wins a step, it is kept once.
  EXPECT_EQ(decode_spaced({{0.1f, 0.9f, 0.0f, 0.0f, 0.0f},
                           leaning,
                           {0.2f, 0.0f, 0.0f, 0.0f, 0.8f},
                           leaning,
                           {0.1f, 0.0f, 0.9f, 0.0f, 0.0f}},
                          0.2f)
                .text,
            "a b");
  // Leaning blanks before the first and after the last character add nothing.
  EXPECT_EQ(decode_spaced({leaning, {0.1f, 0.9f, 0.0f, 0.0f, 0.0f}, leaning}, 0.2f).text, "a");
}

TEST(Ctc, LoadsThePpOcrV4Dictionary) {
  Expected<std::vector<std::string>> table =
      load_ctc_dictionary(std::string(edgemm::testing::source_dir()) + "/models/ppocrv4/ppocr_keys_v1.txt");
  ASSERT_TRUE(table.has_value()) << table.status().to_string();
  // Blank + 6623 lines + space = the rec model's 6625 classes.
  ASSERT_EQ(table->size(), 6625u);
  EXPECT_EQ(table->front(), "");
  EXPECT_EQ(table->back(), " ");
  // Line n of the file is class n.
  EXPECT_EQ((*table)[1], "'");
  EXPECT_EQ((*table)[26], "0");
  EXPECT_EQ((*table)[178], "国");
  EXPECT_EQ((*table)[194], "中");
  EXPECT_EQ((*table)[1221], "A");
  EXPECT_EQ((*table)[5564], "é");
  EXPECT_EQ((*table)[5710], "\u3000");      // IDEOGRAPHIC SPACE is a class of its own
  EXPECT_EQ((*table)[6138], "\U000231C9");  // the one 4-byte character
  EXPECT_EQ((*table)[6623], "懮");          // last line, no trailing newline
}

class CtcDictionaryFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("edgemm_ctc_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& content) {
    const std::string path = (dir_ / "keys.txt").string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(CtcDictionaryFile, StripsLfAndCrLf) {
  Expected<std::vector<std::string>> table = load_ctc_dictionary(write("a\r\n中\nb\n"));
  ASSERT_TRUE(table.has_value()) << table.status().to_string();
  EXPECT_EQ(*table, (std::vector<std::string>{"", "a", "中", "b", " "}));
  table = load_ctc_dictionary(write("x\r\ny"));
  ASSERT_TRUE(table.has_value()) << table.status().to_string();
  EXPECT_EQ(*table, (std::vector<std::string>{"", "x", "y", " "}));
}

TEST_F(CtcDictionaryFile, RefusesEmptyFilesAndLinesThatAreNotOneCharacter) {
  Expected<std::vector<std::string>> table = load_ctc_dictionary(write(""));
  EXPECT_EQ(table.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(table.status().message().find("is empty"), std::string::npos) << table.status().message();

  table = load_ctc_dictionary(write("a\nbc\n"));
  EXPECT_EQ(table.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(table.status().message().find("line 2 holds 2 characters"), std::string::npos) << table.status().message();

  table = load_ctc_dictionary(write("a\n\nb\n"));  // a blank line would be a second blank class
  EXPECT_EQ(table.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(table.status().message().find("line 2 holds 0 characters"), std::string::npos) << table.status().message();

  table = load_ctc_dictionary(write("a\nb\n\xE4\xB8\n"));  // truncated UTF-8
  EXPECT_EQ(table.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(table.status().message().find("line 3: invalid UTF-8"), std::string::npos) << table.status().message();
}

TEST_F(CtcDictionaryFile, MissingFileIsAnIoError) {
  Expected<std::vector<std::string>> table = load_ctc_dictionary((dir_ / "missing.txt").string());
  EXPECT_EQ(table.status().code(), StatusCode::kIo);
  table = load_ctc_dictionary(dir_.string());  // opens, but reading a folder fails
  EXPECT_EQ(table.status().code(), StatusCode::kIo);
  EXPECT_EQ(table.status().message(), "failed reading dictionary '" + dir_.string() + "'");
}

TEST(Utf8, RoundTripsAsciiChineseAndEmoji) {
  const std::string text = "OCR 中文识别 😀!";
  Expected<std::u32string> decoded = utf8_to_u32(text);
  ASSERT_TRUE(decoded.has_value()) << decoded.status().to_string();
  EXPECT_EQ(*decoded, U"OCR \u4E2D\u6587\u8BC6\u522B \U0001F600!");
  EXPECT_EQ(u32_to_utf8(*decoded), text);
}

TEST(Utf8, EncodesEachLengthBoundary) {
  const std::u32string code_points = {0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF};
  const std::vector<size_t> bytes = {1, 2, 2, 3, 3, 4, 4};
  for (size_t i = 0; i < code_points.size(); ++i) {
    const std::string encoded = u32_to_utf8(code_points.substr(i, 1));
    EXPECT_EQ(encoded.size(), bytes[i]) << std::hex << static_cast<uint32_t>(code_points[i]);
    Expected<std::u32string> decoded = utf8_to_u32(encoded);
    ASSERT_TRUE(decoded.has_value()) << decoded.status().to_string();
    EXPECT_EQ(*decoded, code_points.substr(i, 1));
  }
  EXPECT_EQ(u32_to_utf8(U"\U0010FFFF"), "\xF4\x8F\xBF\xBF");
  // Not scalar values: written as U+FFFD.
  EXPECT_EQ(u32_to_utf8(std::u32string{0xD800, 'a', 0x110000}),
            "\xEF\xBF\xBD"
            "a\xEF\xBF\xBD");
  Expected<std::u32string> empty = utf8_to_u32("");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(Utf8, RejectsIllFormedSequences) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\x80", "continuation byte without a lead byte"},
      {"\xC0\xAF", "overlong encoding"},  // '/' in 2 bytes
      {"\xC1\xBF", "overlong encoding"},
      {"\xE0\x80\xAF", "overlong encoding"},
      {"\xF0\x80\x80\xAF", "overlong encoding"},
      {"\xED\xA0\x80", "encoded surrogate"},  // U+D800
      {"\xED\xBF\xBF", "encoded surrogate"},  // U+DFFF
      {"\xF4\x90\x80\x80", "code point above U+10FFFF"},
      {"\xF5\x80\x80\x80", "code point above U+10FFFF"},
      {"\xF8\x88\x80\x80\x80", "byte 0xF8..0xFF cannot occur"},
      {"\xFF", "byte 0xF8..0xFF cannot occur"},
      {"\xE4\xB8", "sequence truncated by the end of the text"},
      {"\xF0\x9F\x98", "sequence truncated by the end of the text"},
      {"\xE4\x41\x42", "sequence truncated by a byte that is not a continuation"},
  };
  for (const auto& [bytes, why] : cases) {
    Expected<std::u32string> decoded = utf8_to_u32(bytes);
    ASSERT_FALSE(decoded.has_value()) << why;
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(decoded.status().message(), "invalid UTF-8 at byte 0: " + why);
  }
  EXPECT_EQ(utf8_to_u32("ok\xE4\xB8").status().message(),
            "invalid UTF-8 at byte 2: sequence truncated by the end of the text");
}

TEST(OcrMetrics, EditDistance) {
  EXPECT_EQ(edit_distance(U"kitten", U"sitting"), 3);
  EXPECT_EQ(edit_distance(U"sitting", U"kitten"), 3);
  EXPECT_EQ(edit_distance(U"flaw", U"lawn"), 2);
  EXPECT_EQ(edit_distance(U"", U""), 0);
  EXPECT_EQ(edit_distance(U"", U"abc"), 3);
  EXPECT_EQ(edit_distance(U"abc", U""), 3);
  EXPECT_EQ(edit_distance(U"same", U"same"), 0);
  // Counted in code points, not bytes.
  EXPECT_EQ(edit_distance(U"中文识别", U"中文识别率"), 1);
  EXPECT_EQ(edit_distance(U"中文识别", U"中又识别"), 1);
  EXPECT_EQ(edit_distance(U"识别", U"别识"), 2);
  EXPECT_EQ(edit_distance(U"😀", U"😁"), 1);
}

TEST(OcrMetrics, NormalizationTrimsAndCollapsesWhitespace) {
  EXPECT_EQ(normalize_ocr_text(U"  edge \t\n mm\u3000ocr\u00A0 "), U"edge mm ocr");
  EXPECT_EQ(normalize_ocr_text(U" \t\u3000"), U"");
  EXPECT_EQ(normalize_ocr_text(U""), U"");
}

TEST(OcrMetrics, NormalizationFoldsWidthsLigaturesQuotesAndDashes) {
  // NFKC: full-width ASCII (U+FF08, U+FF41, U+FF0C, U+FF09), the fi ligature U+FB01, U+2026.
  EXPECT_EQ(normalize_ocr_text(U"\uFF08\uFF41\uFF0Cb\uFF09 \uFB01le\u2026"), U"(a,b) file...");
  EXPECT_EQ(normalize_ocr_text(U"\u2018x\u2019 \u201Cy\u201D Maintainers\u2019"), U"'x' \"y\" Maintainers'");
  EXPECT_EQ(normalize_ocr_text(U"a\u2013b\u2014c\u2212d\u2010e"), U"a-b-c-d-e");
  EXPECT_EQ(normalize_ocr_text(U"\u2022 one \u30FB two \u00B7 three"), U"\u00B7 one \u00B7 two \u00B7 three");
}

TEST(OcrMetrics, NormalizationDropsSpacesNextToChinese) {
  EXPECT_EQ(normalize_ocr_text(U"中文 识别"), U"中文识别");
  EXPECT_EQ(normalize_ocr_text(U"此 软 件 包"), U"此软件包");
  EXPECT_EQ(normalize_ocr_text(U"使用 make 命令。 Debian"), U"使用make命令。Debian");
  // A full-width comma becomes "," under NFKC: the space after it stays only between Latin text.
  EXPECT_EQ(normalize_ocr_text(U"程序\uFF0C 比如 a, b"), U"程序,比如a, b");
}

using Quad = std::array<Point, 4>;

// Axis-aligned rectangle [x0, x1] × [y0, y1], clockwise on screen (y down) from the top-left.
Quad rect(float x0, float y0, float x1, float y1) { return {{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}}; }

TEST(OcrMetrics, PolygonAreas) {
  EXPECT_DOUBLE_EQ(polygon_area(rect(0, 0, 2, 3)), 6.0);
  EXPECT_DOUBLE_EQ(intersection_area(rect(0, 0, 1, 1), rect(0.5f, 0, 1.5f, 1)), 0.5);
  EXPECT_EQ(intersection_area(rect(0, 0, 1, 1), rect(1, 0, 2, 1)), 0.0);  // touching edges
  // Winding does not matter.
  const Quad b = rect(0.5f, 0, 1.5f, 1);
  EXPECT_DOUBLE_EQ(intersection_area(rect(0, 0, 1, 1), {b[3], b[2], b[1], b[0]}), 0.5);
  EXPECT_DOUBLE_EQ(polygon_area({b[3], b[2], b[1], b[0]}), 1.0);
}

TEST(OcrMetrics, PolygonAreasOfRotatedAndNonConvexQuads) {
  // Square [0,2]² and a diamond of half-diagonal 1.5 around (1, 1) (area 4.5): the diamond cuts
  // a right triangle with legs 0.5 (area 0.125) off each corner of the square: 4 - 0.5 = 3.5.
  const Quad diamond = {{{1, -0.5f}, {2.5f, 1}, {1, 2.5f}, {-0.5f, 1}}};
  EXPECT_DOUBLE_EQ(polygon_area(diamond), 4.5);
  EXPECT_DOUBLE_EQ(intersection_area(rect(0, 0, 2, 2), diamond), 3.5);
  // Dart with a reflex corner at (1, 1): shoelace area 4 (its convex hull would have 8).
  const Quad dart = {{{0, 0}, {4, 0}, {1, 1}, {0, 4}}};
  EXPECT_DOUBLE_EQ(polygon_area(dart), 4.0);
  EXPECT_DOUBLE_EQ(intersection_area(dart, rect(0, 0, 4, 4)), 4.0);
}

TEST(OcrMetrics, DegeneratePolygonsHaveNoArea) {
  const Quad line = {{{0, 0}, {1, 1}, {2, 2}, {3, 3}}};
  const Quad point = {{{1, 1}, {1, 1}, {1, 1}, {1, 1}}};
  EXPECT_EQ(polygon_area(line), 0.0);
  EXPECT_EQ(polygon_area(point), 0.0);
  EXPECT_EQ(intersection_area(line, rect(0, 0, 3, 3)), 0.0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(polygon_area(rect(0, 0, nan, 1)), 0.0);
  EXPECT_EQ(polygon_area(rect(0, 0, 1e12f, 1)), 0.0);
}

TEST(OcrMetrics, OneToOneWhenEveryLineHasOnePrediction) {
  // T0 "你好 世界" read as "你好世界" (the space next to Chinese does not count), T1 "edge  mm"
  // read as " edge mn " (1 edit), P2 lies on nothing.
  const std::vector<TruthLine> truth = {{rect(0, 0, 40, 10), "你好 世界"}, {rect(50, 0, 90, 10), "edge  mm"}};
  const std::vector<PredictedLine> predicted = {
      {rect(52, -1, 90, 11), " edge mn "}, {rect(0, 0, 39, 10), "你好世界"}, {rect(0, 30, 30, 40), "noise"}};
  Expected<OcrImageScore> score = score_image(truth, predicted);
  ASSERT_TRUE(score.has_value()) << score.status().to_string();
  ASSERT_EQ(score->groups.size(), 2u);
  EXPECT_EQ(score->groups[0].truth, std::vector<int>{0});
  EXPECT_EQ(score->groups[0].predicted, std::vector<int>{1});
  EXPECT_EQ(score->groups[0].edits, 0);
  EXPECT_EQ(score->groups[0].truth_chars, 4);  // "你好世界"
  EXPECT_EQ(score->groups[1].truth, std::vector<int>{1});
  EXPECT_EQ(score->groups[1].predicted, std::vector<int>{0});
  EXPECT_EQ(score->groups[1].edits, 1);
  EXPECT_EQ(score->groups[1].truth_chars, 7);  // "edge mm"
  EXPECT_TRUE(score->unmatched_truth.empty());
  EXPECT_EQ(score->unmatched_predicted, std::vector<int>{2});
  EXPECT_EQ(score->truth_lines, 2);
  EXPECT_EQ(score->truth_chars, 11);
  EXPECT_EQ(score->edits, 1);
}

TEST(OcrMetrics, ALineSplitInTwoIsJoinedAlongTheRow) {
  // One true line, read as two boxes (listed right one first): "hello" + "big world".
  const std::vector<TruthLine> truth = {{rect(0, 0, 100, 10), "hello big world"}};
  const std::vector<PredictedLine> predicted = {{rect(45, 0, 100, 10), "big world"}, {rect(0, 0, 40, 10), "hello"}};
  Expected<OcrImageScore> score = score_image(truth, predicted);
  ASSERT_TRUE(score.has_value()) << score.status().to_string();
  ASSERT_EQ(score->groups.size(), 1u);
  EXPECT_EQ(score->groups[0].predicted, (std::vector<int>{1, 0}));
  EXPECT_EQ(score->groups[0].edits, 0);
  EXPECT_EQ(score->edits, 0);
  OcrScoreTotals totals;
  totals.add(*score);
  EXPECT_EQ(totals.precision(), 1.0);
  EXPECT_EQ(totals.recall(), 1.0);
}

TEST(OcrMetrics, TwoCellsOfARowReadAsOneLineAreJoined) {
  // Turned 180°: the text's top-left corner comes first and lies at the bottom right, so the
  // row runs right to left on screen and "abc" is the right-hand cell.
  const Quad left = {{{40, 10}, {0, 10}, {0, 0}, {40, 0}}};
  const Quad right = {{{90, 10}, {50, 10}, {50, 0}, {90, 0}}};
  const std::vector<TruthLine> truth = {{left, "def"}, {right, "abc"}};
  const std::vector<PredictedLine> predicted = {{{{{90, 10}, {0, 10}, {0, 0}, {90, 0}}}, "abc dxf"}};
  Expected<OcrImageScore> score = score_image(truth, predicted);
  ASSERT_TRUE(score.has_value()) << score.status().to_string();
  ASSERT_EQ(score->groups.size(), 1u);
  EXPECT_EQ(score->groups[0].truth, (std::vector<int>{1, 0}));
  EXPECT_EQ(score->groups[0].truth_chars, 7);  // "abc def"
  EXPECT_EQ(score->groups[0].edits, 1);
}

TEST(OcrMetrics, APredictionDoesNotJoinTheRowsAroundIt) {
  // P0 is taller than its line and covers half of the line below: the rows stay apart.
  const std::vector<TruthLine> truth = {{rect(0, 0, 100, 10), "top"}, {rect(0, 12, 100, 22), "bottom"}};
  const std::vector<PredictedLine> predicted = {{rect(0, 0, 100, 17), "top"}, {rect(0, 12, 100, 22), "bottom"}};
  Expected<OcrImageScore> score = score_image(truth, predicted);
  ASSERT_TRUE(score.has_value()) << score.status().to_string();
  ASSERT_EQ(score->groups.size(), 2u);
  EXPECT_EQ(score->groups[0].truth, std::vector<int>{0});
  EXPECT_EQ(score->groups[0].predicted, std::vector<int>{0});
  EXPECT_EQ(score->groups[1].truth, std::vector<int>{1});
  EXPECT_EQ(score->groups[1].predicted, std::vector<int>{1});
  EXPECT_EQ(score->edits, 0);
}

TEST(OcrMetrics, IgnoredLinesNeitherCountNorPenalize) {
  TruthLine tiny{rect(0, 0, 20, 5), "tiny", true};
  const std::vector<TruthLine> truth = {tiny, {rect(0, 10, 40, 20), "real"}};
  // P0 reads the ignored line (left out), P1 misses the real one's text, P2 is a stray box.
  const std::vector<PredictedLine> predicted = {
      {rect(0, 0, 20, 6), "tmy"}, {rect(0, 10, 40, 20), "rea"}, {rect(60, 0, 70, 5), "x"}};
  Expected<OcrImageScore> score = score_image(truth, predicted);
  ASSERT_TRUE(score.has_value()) << score.status().to_string();
  EXPECT_EQ(score->ignored_predicted, std::vector<int>{0});
  EXPECT_EQ(score->unmatched_predicted, std::vector<int>{2});
  EXPECT_TRUE(score->unmatched_truth.empty());
  EXPECT_EQ(score->truth_lines, 1);
  EXPECT_EQ(score->truth_chars, 4);
  EXPECT_EQ(score->edits, 1);
  OcrScoreTotals totals;
  totals.add(*score);
  EXPECT_EQ(totals.predicted_lines, 2);
  EXPECT_DOUBLE_EQ(totals.precision(), 0.5);
  EXPECT_EQ(totals.recall(), 1.0);
}

TEST(OcrMetrics, UnmatchedTruthCountsAllItsCharacters) {
  // T1 "de" has no prediction: its 2 characters are errors; T0 "abc" read as "abd": 1 edit.
  const std::vector<TruthLine> truth = {{rect(0, 0, 10, 10), "abc"}, {rect(20, 0, 30, 10), "de"}};
  const std::vector<PredictedLine> predicted = {{rect(0, 0, 10, 10), "abd"}};
  Expected<OcrImageScore> score = score_image(truth, predicted);
  ASSERT_TRUE(score.has_value()) << score.status().to_string();
  ASSERT_EQ(score->groups.size(), 1u);
  EXPECT_EQ(score->groups[0].edits, 1);
  EXPECT_EQ(score->unmatched_truth, std::vector<int>{1});
  EXPECT_TRUE(score->unmatched_predicted.empty());
  EXPECT_EQ(score->truth_chars, 5);
  EXPECT_EQ(score->edits, 3);
}

TEST(OcrMetrics, OverlapThresholdIsInclusive) {
  // A prediction as large as the line, shifted by half its width: it shares 50 of
  // min(100, 100) square pixels, an overlap of exactly 0.5.
  const std::vector<TruthLine> truth = {{rect(0, 0, 10, 10), "a"}};
  Expected<OcrImageScore> score = score_image(truth, {{rect(5, 0, 15, 10), "a"}}, 0.5);
  ASSERT_TRUE(score.has_value());
  EXPECT_EQ(score->groups.size(), 1u);
  score = score_image(truth, {{rect(5, 0, 15, 10), "a"}}, 0.6);
  ASSERT_TRUE(score.has_value());
  EXPECT_TRUE(score->groups.empty());
  EXPECT_EQ(score->edits, 1);
}

TEST(OcrMetrics, RefusesBadThresholdsAndInvalidUtf8) {
  const std::vector<TruthLine> truth = {{rect(0, 0, 10, 10), "a"}};
  const std::vector<PredictedLine> predicted = {{rect(0, 0, 10, 10), "a"}, {rect(0, 0, 10, 10), "\xC0\xAF"}};
  for (double threshold : {0.0, -0.5, 1.5, std::nan("")}) {
    EXPECT_EQ(score_image(truth, {}, threshold).status().code(), StatusCode::kInvalidArgument) << threshold;
  }
  Expected<OcrImageScore> score = score_image(truth, predicted);
  ASSERT_FALSE(score.has_value());
  EXPECT_EQ(score.status().message(), "predicted line 1: invalid UTF-8 at byte 0: overlong encoding");
  score = score_image({{rect(0, 0, 10, 10), "\xFF"}}, {});
  ASSERT_FALSE(score.has_value());
  EXPECT_EQ(score.status().message(), "truth line 0: invalid UTF-8 at byte 0: byte 0xF8..0xFF cannot occur");
}

TEST(OcrMetrics, TotalsOverImages) {
  OcrScoreTotals totals;
  EXPECT_EQ(totals.cer(), 0.0);
  EXPECT_EQ(totals.precision(), 1.0);
  EXPECT_EQ(totals.recall(), 1.0);

  // Image 1: 2 truths (4 + 7 chars), both read (0 + 1 edit), 1 stray prediction.
  Expected<OcrImageScore> image1 = score_image(
      {{rect(0, 0, 40, 10), "你好 世界"}, {rect(50, 0, 90, 10), "edge  mm"}},
      {{rect(52, -1, 90, 11), " edge mn "}, {rect(0, 0, 39, 10), "你好世界"}, {rect(0, 30, 30, 40), "noise"}});
  // Image 2: 2 truths (5 chars), 1 matched with 1 edit, 1 missed (2 edits).
  Expected<OcrImageScore> image2 =
      score_image({{rect(0, 0, 10, 10), "abc"}, {rect(20, 0, 30, 10), "de"}}, {{rect(0, 0, 10, 10), "abd"}});
  // Image 3: no truth, 1 prediction.
  Expected<OcrImageScore> image3 = score_image({}, {{rect(0, 0, 10, 10), "ghost"}});
  ASSERT_TRUE(image1.has_value() && image2.has_value() && image3.has_value());
  EXPECT_EQ(image3->truth_chars, 0);
  EXPECT_EQ(image3->edits, 0);

  totals.add(*image1);
  totals.add(*image2);
  totals.add(*image3);
  EXPECT_EQ(totals.truth_lines, 4);
  EXPECT_EQ(totals.predicted_lines, 5);
  EXPECT_EQ(totals.matched_truth, 3);
  EXPECT_EQ(totals.matched_predicted, 3);
  EXPECT_EQ(totals.truth_chars, 16);
  EXPECT_EQ(totals.edits, 4);
  EXPECT_DOUBLE_EQ(totals.cer(), 4.0 / 16.0);
  EXPECT_DOUBLE_EQ(totals.precision(), 0.6);
  EXPECT_DOUBLE_EQ(totals.recall(), 0.75);
}

}  // namespace ocr_text_test
}  // namespace edgemm::ocr
