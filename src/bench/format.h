#pragma once
/// \file format.h
/// Number formatting shared by the report writers (Markdown, HTML, SVG, profile tables).

#include <string>

namespace edgemm::bench {

/// `value` with exactly `digits` decimals ("3.14" for 3.14159 and 2), as printf's "%.*f".
std::string fixed(double value, int digits);

}  // namespace edgemm::bench
