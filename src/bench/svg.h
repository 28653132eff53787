#pragma once
/// \file svg.h
/// Small chart primitives that write self-contained SVG text (no script, no external
/// resources) for the HTML bench report: a box-and-strip plot of latency samples, a
/// horizontal bar chart and a line chart with several series. Every string is escaped for
/// XML; labels too long for their column are cut with "…" and carry the full text in a
/// <title> tooltip. Charts are laid out for a width of about 900 px.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edgemm::bench::svg {

/// `text` with &, <, >, " and ' replaced by XML entities, fit for element text and
/// attribute values.
std::string xml_escape(std::string_view text);

/// The fixed colour ("#rrggbb") of a runtime, from the Okabe–Ito colour-blind-safe palette:
/// edgemm blue, onnxruntime orange, opencv bluish green, guten-ocr reddish purple, any other
/// name grey.
std::string runtime_colour(std::string_view runtime);

/// Axis ticks: `values` run from `lo` to `hi` in steps of `step`.
struct Ticks {
  double lo = 0;
  double hi = 1;
  double step = 1;
  std::vector<double> values;
};

/// "Nice" ticks covering [lo, hi] with about `target` intervals: the step is the smallest of
/// 1, 2, 5 × 10^k at least (hi − lo) / target, and the ends are rounded out to multiples of
/// it (after Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990). An empty range
/// (lo == hi) is widened to lo ± max(|lo| / 10, 1). Precondition: finite lo ≤ hi, target ≥ 1.
Ticks nice_ticks(double lo, double hi, int target = 5);

/// A tick value with as many decimals as `step` needs ("20", "2.5", "0.05").
std::string tick_label(double value, double step);

/// One row of a box-and-strip plot.
struct BoxGroup {
  std::string label;            ///< left of the row, e.g. the runtime
  std::string colour;           ///< "#rrggbb"
  std::vector<double> samples;  ///< every measurement, any order; empty when `note` explains why
  std::string note;             ///< shown in place of the plot when there are no samples
};

/// A horizontal box-and-strip plot: per group a min–max whisker, a p25–p75 box, the median
/// as a bold line, p90 (short) and p99 (tall) ticks, and every sample as a faint dot.
struct BoxPlot {
  std::string title;             ///< above the plot
  std::string axis_label;        ///< with the unit, e.g. "latency (ms)"
  std::string unit;              ///< appended to the median shown at the right of each row, e.g. "ms"
  std::vector<BoxGroup> groups;  ///< top to bottom
};

/// The plot as an <svg> element 900 px wide.
std::string box_strip_plot(const BoxPlot& plot);

/// One bar.
struct Bar {
  std::string label;            ///< left of the bar
  double value = 0;             ///< ≥ 0
  std::string colour;           ///< "#rrggbb"
  std::optional<double> share;  ///< a fraction in [0, 1], shown as a percentage after the value
};

/// A horizontal bar chart, bars from zero, in the order given.
struct BarChart {
  std::string title;                ///< above the chart
  std::string axis_label;           ///< with the unit, e.g. "median latency / edgemm's (×)"
  std::string unit;                 ///< appended to each value, e.g. "×" or " ms"
  int value_digits = 2;             ///< decimals of the values shown
  std::optional<double> reference;  ///< a dashed vertical line at this value (e.g. 1 for ratios)
  std::string reference_label;      ///< written above the reference line
  std::vector<Bar> bars;            ///< top to bottom
};

/// The chart as an <svg> element 900 px wide.
std::string bar_chart(const BarChart& chart);

/// One line of a line chart: (x, y) points, drawn in ascending x with a marker at each.
struct Series {
  std::string name;                               ///< legend entry
  std::string colour;                             ///< "#rrggbb", of the line and its markers
  bool dashed = false;                            ///< a dashed line, to tell series of one colour apart
  std::vector<std::pair<double, double>> points;  ///< (x, y), any order
};

/// A line chart with numeric axes; y starts at zero. The x ticks are the distinct x values
/// of the data (labels that would collide are left out), the y ticks are nice_ticks().
struct LineChart {
  std::string title;           ///< above the legend
  std::string x_label;         ///< with the unit when there is one, e.g. "width (px)"
  std::string y_label;         ///< e.g. "median latency (ms)"
  std::vector<Series> series;  ///< legend order
};

/// The chart, with a legend above the plot, as an <svg> element 900 px wide.
std::string line_chart(const LineChart& chart);

}  // namespace edgemm::bench::svg
