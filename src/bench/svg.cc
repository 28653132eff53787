#include "bench/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "bench/format.h"
#include "bench/stats.h"

namespace edgemm::bench::svg {

namespace {

constexpr double kWidth = 900;
constexpr double kFontSize = 12;
/// Average advance of a character of a sans-serif system font, in font sizes (DejaVu Sans,
/// the widest of the usual ones, averages about 0.6 on labels).
constexpr double kCharWidth = 0.62;
constexpr const char* kTextColour = "#222222";
constexpr const char* kGridColour = "#e3e3e3";
constexpr const char* kAxisColour = "#555555";

/// `v` with up to 6 significant digits and no trailing zeros ("96", "0.5").
std::string shortest(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// A coordinate in px, with one decimal.
std::string px(double v) { return fixed(v, 1); }

/// Characters (UTF-8 code points) in `text`.
size_t char_count(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

/// The first `n` characters of `text`, never splitting a UTF-8 sequence.
std::string first_chars(std::string_view text, size_t n) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((text[i] & 0xC0) != 0x80 && seen++ == n) return std::string(text.substr(0, i));
  }
  return std::string(text);
}

/// Estimated width of `text` in px at `font_size`.
double text_width(std::string_view text, double font_size) {
  return static_cast<double>(char_count(text)) * kCharWidth * font_size;
}

/// A <text> element at (x, y) cut to `max_px`; when cut, it ends in "…" and its <title>
/// holds the whole text. `attrs` are extra attributes (anchor, weight, ...).
std::string fitted_text(double x, double y, std::string_view text, double max_px, const std::string& attrs = "",
                        double font_size = kFontSize) {
  const size_t fits = static_cast<size_t>(std::max(1.0, max_px / (kCharWidth * font_size)));
  const bool cut = char_count(text) > fits;
  std::string out = "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" font-size=\"" + fixed(font_size, 0) + "\"" +
                    (attrs.empty() ? "" : " " + attrs) + ">";
  out += cut ? "<title>" + xml_escape(text) + "</title>" + xml_escape(first_chars(text, fits - 1)) + "…"
             : xml_escape(text);
  return out + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& stroke, double width,
                 const std::string& extra = "") {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\" stroke=\"" +
         stroke + "\" stroke-width=\"" + fixed(width, 1) + "\"" + (extra.empty() ? "" : " " + extra) + "/>\n";
}

std::string svg_open(double height, std::string_view title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + px(kWidth) + "\" height=\"" +
         px(height) + "\" viewBox=\"0 0 " + px(kWidth) + " " + px(height) + "\" role=\"img\" aria-label=\"" +
         xml_escape(title) +
         "\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif\" "
         "fill=\"" +
         kTextColour + "\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" +
         fitted_text(12, 22, title, kWidth - 24, "font-weight=\"bold\"", 14);
}

/// Maps a data interval linearly onto a px interval.
struct Scale {
  double d0, d1, r0, r1;
  double operator()(double v) const { return d1 == d0 ? r0 : r0 + (v - d0) * (r1 - r0) / (d1 - d0); }
};

/// A horizontal axis at `y` under a plot spanning [top, y]: grid lines, tick labels and the
/// axis label centred under them.
std::string x_axis(const Ticks& ticks, const Scale& x, double top, double y, std::string_view label) {
  std::string out;
  for (double v : ticks.values) {
    out += line(x(v), top, x(v), y, kGridColour, 1);
    out += "<text x=\"" + px(x(v)) + "\" y=\"" + px(y + 16) + "\" font-size=\"11\" text-anchor=\"middle\">" +
           tick_label(v, ticks.step) + "</text>\n";
  }
  out += line(x.r0, y, x.r1, y, kAxisColour, 1);
  out += fitted_text((x.r0 + x.r1) / 2, y + 34, label, x.r1 - x.r0, "text-anchor=\"middle\"");
  return out;
}

/// The smallest and the largest sample over all groups; (0, 0) when there are none.
std::pair<double, double> sample_range(const std::vector<BoxGroup>& groups) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& g : groups) {
    for (double v : g.samples) {
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  }
  return {lo, hi};
}

/// One box-and-strip row centred on `cy`.
std::string box_row(const BoxGroup& g, const Scale& x, double cy, const std::string& unit) {
  std::vector<double> s = g.samples;
  std::sort(s.begin(), s.end());
  const double lo = s.front(), hi = s.back();
  const double q1 = quantile(s, 0.25), med = quantile(s, 0.5), q3 = quantile(s, 0.75);
  const double p90 = quantile(s, 0.9), p99 = quantile(s, 0.99);
  std::string out = line(x(lo), cy, x(hi), cy, g.colour, 1.5);
  out += line(x(lo), cy - 5, x(lo), cy + 5, g.colour, 1.5) + line(x(hi), cy - 5, x(hi), cy + 5, g.colour, 1.5);
  out += "<rect x=\"" + px(x(q1)) + "\" y=\"" + px(cy - 8) + "\" width=\"" + px(std::max(x(q3) - x(q1), 1.0)) +
         "\" height=\"16\" fill=\"" + g.colour + "\" fill-opacity=\"0.25\" stroke=\"" + g.colour + "\"/>\n";
  for (size_t i = 0; i < g.samples.size(); ++i) {
    const double jitter = static_cast<double>(static_cast<int>((i * 7) % 9) - 4) * 2.2;
    out += "<circle cx=\"" + px(x(g.samples[i])) + "\" cy=\"" + px(cy + jitter) + "\" r=\"2\" fill=\"" + g.colour +
           "\" fill-opacity=\"0.35\"/>\n";
  }
  out += line(x(p90), cy - 7, x(p90), cy + 7, kTextColour, 1.2);
  out += line(x(p99), cy - 11, x(p99), cy + 11, kTextColour, 1.2);
  out += line(x(med), cy - 9, x(med), cy + 9, kTextColour, 3);
  out += fitted_text(kWidth - 140, cy + 4, "median " + fixed(med, 2) + " " + unit, 135);
  return out;
}

/// Where the legend entries of a line chart go: (x, y) of each, wrapping into rows.
std::vector<std::pair<double, double>> legend_positions(const std::vector<Series>& series, double left, double top) {
  std::vector<std::pair<double, double>> at;
  double x = left, y = top;
  for (const auto& s : series) {
    const double w = 34 + std::min(text_width(s.name, kFontSize), 260.0) + 24;
    if (x > left && x + w > kWidth - 12) {
      x = left;
      y += 20;
    }
    at.emplace_back(x, y);
    x += w;
  }
  return at;
}

std::string legend(const std::vector<Series>& series, const std::vector<std::pair<double, double>>& at) {
  std::string out;
  for (size_t i = 0; i < series.size(); ++i) {
    const auto [x, y] = at[i];
    out += line(x, y - 4, x + 26, y - 4, series[i].colour, 2.5, series[i].dashed ? "stroke-dasharray=\"6 3\"" : "");
    out += "<circle cx=\"" + px(x + 13) + "\" cy=\"" + px(y - 4) + "\" r=\"4\" fill=\"" + series[i].colour + "\"/>\n";
    out += fitted_text(x + 34, y, series[i].name, 260);
  }
  return out;
}

/// x ticks of a line chart: the distinct x values, each labelled unless it would touch the
/// label before it.
std::string data_x_axis(const std::set<double>& xs, const Scale& x, double top, double y, std::string_view label) {
  std::string out;
  double last_right = -1e9;
  for (double v : xs) {
    out += line(x(v), top, x(v), y, kGridColour, 1);
    const std::string text = shortest(v);
    const double half = text_width(text, 11) / 2;
    if (x(v) - half < last_right + 8) continue;
    out += "<text x=\"" + px(x(v)) + "\" y=\"" + px(y + 16) + "\" font-size=\"11\" text-anchor=\"middle\">" + text +
           "</text>\n";
    last_right = x(v) + half;
  }
  out += line(x.r0, y, x.r1, y, kAxisColour, 1);
  out += fitted_text((x.r0 + x.r1) / 2, y + 34, label, x.r1 - x.r0, "text-anchor=\"middle\"");
  return out;
}

std::string y_axis(const Ticks& ticks, const Scale& y, double left, double right, std::string_view label) {
  std::string out;
  for (double v : ticks.values) {
    out += line(left, y(v), right, y(v), kGridColour, 1);
    out += "<text x=\"" + px(left - 6) + "\" y=\"" + px(y(v) + 4) + "\" font-size=\"11\" text-anchor=\"end\">" +
           tick_label(v, ticks.step) + "</text>\n";
  }
  out += line(left, y.r0, left, y.r1, kAxisColour, 1);
  const double mid = (y.r0 + y.r1) / 2;
  out += "<g transform=\"translate(18 " + px(mid) + ") rotate(-90)\">\n" +
         fitted_text(0, 0, label, y.r0 - y.r1, "text-anchor=\"middle\"") + "</g>\n";
  return out;
}

std::string polyline(const Series& s, const Scale& x, const Scale& y) {
  std::vector<std::pair<double, double>> points = s.points;
  std::sort(points.begin(), points.end());
  std::string coords, markers;
  for (const auto& [vx, vy] : points) {
    coords += (coords.empty() ? "" : " ") + px(x(vx)) + "," + px(y(vy));
    markers += "<circle cx=\"" + px(x(vx)) + "\" cy=\"" + px(y(vy)) + "\" r=\"4\" fill=\"" + s.colour +
               "\" stroke=\"#ffffff\" stroke-width=\"1\"><title>" + xml_escape(s.name) + ": " + fixed(vy, 2) +
               "</title></circle>\n";
  }
  return "<polyline points=\"" + coords + "\" fill=\"none\" stroke=\"" + s.colour + "\" stroke-width=\"2.5\"" +
         (s.dashed ? " stroke-dasharray=\"6 3\"" : "") + "/>\n" + markers;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string runtime_colour(std::string_view runtime) {
  if (runtime == "edgemm") return "#0072B2";
  if (runtime == "onnxruntime") return "#E69F00";
  if (runtime == "opencv") return "#009E73";
  if (runtime == "guten-ocr") return "#CC79A7";
  return "#777777";
}

Ticks nice_ticks(double lo, double hi, int target) {
  if (hi <= lo) {
    const double pad = std::max(std::abs(lo) / 10, 1.0);
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw * (1 - 1e-9)) {
      step = m * magnitude;
      break;
    }
  }
  const double first = std::floor(lo / step + 1e-9);
  const double last = std::ceil(hi / step - 1e-9);
  Ticks t;
  t.step = step;
  t.lo = first * step;
  t.hi = last * step;
  for (double i = first; i <= last + 0.5; ++i) t.values.push_back(i * step);
  return t;
}

std::string tick_label(double value, double step) {
  int digits = 0;
  while (digits < 9 && std::abs(step * std::pow(10.0, digits) - std::round(step * std::pow(10.0, digits))) > 1e-6) {
    ++digits;
  }
  if (std::abs(value) < std::abs(step) * 1e-9) value = 0;
  return fixed(value, digits);
}

std::string box_strip_plot(const BoxPlot& plot) {
  constexpr double kLeft = 180, kRight = kWidth - 150, kTop = 44, kRow = 40;
  const auto [lo, hi] = sample_range(plot.groups);
  const Ticks ticks = nice_ticks(lo, hi, 6);
  const Scale x{ticks.lo, ticks.hi, kLeft, kRight};
  const double axis_y = kTop + kRow * static_cast<double>(plot.groups.size()) + 4;
  const double height = axis_y + 72;
  std::string out = svg_open(height, plot.title);
  out += x_axis(ticks, x, kTop, axis_y, plot.axis_label);
  for (size_t i = 0; i < plot.groups.size(); ++i) {
    const BoxGroup& g = plot.groups[i];
    const double cy = kTop + kRow * (static_cast<double>(i) + 0.5);
    out += fitted_text(kLeft - 10, cy + 4, g.label, kLeft - 22, "text-anchor=\"end\"");
    if (g.samples.empty()) {
      out += fitted_text(kLeft + 6, cy + 4, g.note, kRight - kLeft, "font-style=\"italic\" fill=\"#b00020\"");
      continue;
    }
    out += box_row(g, x, cy, plot.unit);
  }
  out += fitted_text(12, height - 10,
                     "box: p25–p75 · thick line: median · whiskers: min–max · short tick: p90 · tall tick: p99 · "
                     "dots: every timed run",
                     kWidth - 24, "fill=\"#555555\"", 11);
  return out + "</svg>\n";
}

std::string bar_chart(const BarChart& chart) {
  constexpr double kRight = kWidth - 150, kTop = 50, kRow = 26;
  double longest = 0;
  for (const auto& b : chart.bars) longest = std::max(longest, text_width(b.label, kFontSize));
  const double left = std::clamp(longest + 22, 120.0, 340.0);
  double hi = chart.reference.value_or(0);
  for (const auto& b : chart.bars) hi = std::max(hi, b.value);
  const Ticks ticks = nice_ticks(0, hi, 6);
  const Scale x{0, ticks.hi, left, kRight};
  const double axis_y = kTop + kRow * static_cast<double>(chart.bars.size()) + 4;
  const double height = axis_y + 48;
  std::string out = svg_open(height, chart.title);
  out += x_axis(ticks, x, kTop, axis_y, chart.axis_label);
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double cy = kTop + kRow * (static_cast<double>(i) + 0.5);
    out += fitted_text(left - 10, cy + 4, b.label, left - 22, "text-anchor=\"end\"");
    out += "<rect x=\"" + px(left) + "\" y=\"" + px(cy - 8) + "\" width=\"" + px(x(b.value) - left) +
           "\" height=\"16\" fill=\"" + b.colour + "\"/>\n";
    std::string value = fixed(b.value, chart.value_digits) + chart.unit;
    if (b.share) value += " (" + fixed(*b.share * 100, 1) + " %)";
    out += fitted_text(x(b.value) + 6, cy + 4, value, kWidth - x(b.value) - 12,
                       "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"");
  }
  if (chart.reference) {
    const double rx = x(*chart.reference);
    out += line(rx, kTop - 6, rx, axis_y, kAxisColour, 1.5, "stroke-dasharray=\"5 4\"");
    out += fitted_text(rx, kTop - 10, chart.reference_label, 2 * std::min(rx - 12, kWidth - 12 - rx),
                       "text-anchor=\"middle\" fill=\"#555555\"", 11);
  }
  return out + "</svg>\n";
}

std::string line_chart(const LineChart& chart) {
  constexpr double kLeft = 80, kRight = kWidth - 30, kPlotHeight = 260;
  const auto legend_at = legend_positions(chart.series, kLeft, 48);
  const double top = (legend_at.empty() ? 48 : legend_at.back().second) + 18;
  const double bottom = top + kPlotHeight;
  std::set<double> xs;
  double y_max = 0;
  for (const auto& s : chart.series) {
    for (const auto& [vx, vy] : s.points) {
      xs.insert(vx);
      y_max = std::max(y_max, vy);
    }
  }
  const double x_lo = xs.empty() ? 0 : *xs.begin(), x_hi = xs.empty() ? 1 : *xs.rbegin();
  const double pad = x_hi > x_lo ? (x_hi - x_lo) * 0.05 : 1;
  const Scale x{x_lo - pad, x_hi + pad, kLeft, kRight};
  const Ticks y_ticks = nice_ticks(0, y_max > 0 ? y_max : 1, 5);
  const Scale y{0, y_ticks.hi, bottom, top};
  std::string out = svg_open(bottom + 48, chart.title);
  out += legend(chart.series, legend_at);
  out += y_axis(y_ticks, y, kLeft, kRight, chart.y_label);
  out += data_x_axis(xs, x, top, bottom, chart.x_label);
  for (const auto& s : chart.series) out += polyline(s, x, y);
  return out + "</svg>\n";
}

}  // namespace edgemm::bench::svg
