#include "util/error.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sx {

const std::vector<CodeInfo>& all_codes() {
  static const std::vector<CodeInfo> codes = {
#define SX_ERROR(id, code, title, text) {Code::id, code, title, text},
#include "util/errors.def"
#undef SX_ERROR
  };
  return codes;
}

const CodeInfo& code_info(Code c) { return all_codes()[static_cast<size_t>(c)]; }

const CodeInfo* find_code(std::string_view name) {
  for (const auto& c : all_codes())
    if (name == c.name) return &c;
  return nullptr;
}

namespace {
size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The byte offset of code point `k` of `s` (s.size() past the end).
size_t byte_of(std::string_view s, size_t k) {
  size_t i = 0;
  for (; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && k-- == 0) return i;
  return s.size();
}

// A source line longer than this many code points is shown as a window
// around the span, cut with "...": generated files can have lines of
// thousands of characters.
constexpr size_t kShownWidth = 100;
constexpr size_t kContextBefore = 30;
}  // namespace

std::string render(const Diagnostic& d) {
  std::string out = fmt::format("error[{}]: {}\n", code_info(d.code).name, d.message);
  size_t width = 1;
  if (d.span.valid()) {
    const SourceFile& f = Sources::global().get(d.span.file);
    std::string num = std::to_string(d.span.line);
    width = num.size();
    std::string pad(width, ' ');
    out += fmt::format("{}--> {}:{}:{}\n", pad, f.display, d.span.line, d.span.col);
    std::string_view line = f.line_text(d.span.line);
    // Carets under the span's part of its first line.
    size_t line_begin = f.line_starts[d.span.line - 1];
    size_t b = std::min<size_t>(d.span.begin - line_begin, line.size());
    size_t e = std::min<size_t>(std::max<size_t>(d.span.end, d.span.begin) - line_begin, line.size());
    size_t lead = code_points(line.substr(0, b));
    size_t len = std::max<size_t>(1, code_points(line.substr(b, e - b)));
    std::string shown(line), before, after;
    if (size_t total = code_points(line); total > kShownWidth) {
      size_t from = lead > kContextBefore ? std::min(lead - kContextBefore, total - kShownWidth) : 0;
      size_t to = from + kShownWidth;
      shown = std::string(line.substr(byte_of(line, from), byte_of(line, to) - byte_of(line, from)));
      if (from > 0) before = "...";
      if (to < total) after = "...";
      lead -= from;
      if (lead + len > kShownWidth) len = lead < kShownWidth ? kShownWidth - lead : 1;
    }
    out += fmt::format("{} |\n", pad);
    out += fmt::format("{} | {}{}{}\n", num, before, shown, after);
    out += fmt::format("{} | {}{}\n", pad, std::string(before.size() + lead, ' '), std::string(len, '^'));
  }
  std::string pad(width + 1, ' ');
  for (const auto& n : d.notes) out += fmt::format("{}= {}\n", pad, n);
  if (!d.help.empty()) out += fmt::format("{}= help: {}\n", pad, d.help);
  return out;
}

void internal_error(const char* file, int line, const std::string& what) {
  throw InternalError(fmt::format("internal error at {}:{}: {} (this is a bug in sexpgpu; please report it)",
                                  file, line, what));
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      // Transposition of neighbours counts as one edit ("lr" vs "rl").
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev[j - 1]);  // approximate OSA distance
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_d) best_d = d, best = c;
  }
  size_t limit = std::max<size_t>(1, std::max(name.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  std::string near = nearest(name, candidates);
  return near.empty() ? std::string() : fmt::format("did you mean `{}`?", near);
}

}  // namespace sx
