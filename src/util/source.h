#pragma once
// Source files and positions: every datum, graph node and error carries a Span
// into a file registered here, so any later stage can show the .sx line.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sx {

struct Span {
  int32_t file = -1;    // index into Sources; -1: no position
  uint32_t begin = 0;   // byte offsets into the file's text, [begin, end)
  uint32_t end = 0;
  uint32_t line = 0;    // 1-based line and column (column counts code points)
  uint32_t col = 0;
  bool valid() const { return file >= 0; }
};

struct SourceFile {
  std::string path;     // where it was read from (absolute or as given)
  std::string display;  // how errors name it: as given on the command line, or std/nn.sx
  std::string text;
  std::vector<uint32_t> line_starts;
  std::string_view line_text(uint32_t line) const;  // 1-based, without the newline
};

// The registry of every file read in this process. Files are never removed,
// so a Span stays valid for the life of the process.
class Sources {
 public:
  static Sources& global();
  int32_t add(std::string path, std::string display, std::string text);
  const SourceFile& get(int32_t id) const;
  // "my-run.sx:14:3", or "" without a position.
  std::string where(const Span& s) const;

 private:
  std::vector<SourceFile> files_;
};

}  // namespace sx
