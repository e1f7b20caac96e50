#include "util/source.h"

#include <fmt/format.h>

#include <mutex>

#include "util/error.h"

namespace sx {

namespace {
std::mutex sources_mutex;
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts.size()) return {};
  size_t b = line_starts[line - 1];
  size_t e = line < line_starts.size() ? line_starts[line] : text.size();
  std::string_view v(text.data() + b, e - b);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.remove_suffix(1);
  return v;
}

Sources& Sources::global() {
  static Sources s;
  return s;
}

int32_t Sources::add(std::string path, std::string display, std::string text) {
  std::lock_guard lock(sources_mutex);
  SourceFile f{std::move(path), std::move(display), std::move(text), {0}};
  for (uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<int32_t>(files_.size() - 1);
}

const SourceFile& Sources::get(int32_t id) const {
  std::lock_guard lock(sources_mutex);
  SX_ASSERT(id >= 0 && static_cast<size_t>(id) < files_.size(), "span names an unknown source file");
  return files_[id];
}

std::string Sources::where(const Span& s) const {
  if (!s.valid()) return "";
  return fmt::format("{}:{}:{}", get(s.file).display, s.line, s.col);
}

}  // namespace sx
