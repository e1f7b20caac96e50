#pragma once
// The bundled libraries under std/, embedded at build time (cmake/embed_std.cmake).
#include <string>
#include <vector>

namespace sx {
struct StdFile {
  std::string name;  // "std/nn"
  std::string text;
};
const std::vector<StdFile>& std_files();
}  // namespace sx
