#include "util/error.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "util/printable.h"

namespace sx {

namespace {
// error_ids.inc is written from errors.def by CMake; each code's place in it
// must be its place in errors.def, which code_info() indexes by.
constexpr Code kDefinitionOrder[] = {
#define SX_ERROR(id, code, title, text) Code::id,
#include "util/errors.def"
#undef SX_ERROR
};
constexpr bool ids_in_definition_order() {
  for (size_t i = 0; i < std::size(kDefinitionOrder); ++i)
    if (static_cast<size_t>(kDefinitionOrder[i]) != i) return false;
  return true;
}
static_assert(ids_in_definition_order(), "error_ids.inc is out of date with errors.def: re-run cmake");
}  // namespace

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
// A source line longer than this many characters is shown as a window
// around the span, cut with "...": generated files can have lines of
// thousands of characters.
constexpr size_t kShownWidth = 100;
constexpr size_t kContextBefore = 30;

size_t columns(const std::vector<PrintableCell>& cells, size_t from, size_t to) {
  size_t n = 0;
  for (size_t i = from; i < to; ++i) n += cells[i].width;
  return n;
}

// The source line with its control characters and invalid bytes escaped, and
// carets under the span's part of it: a tab shows as `\t`, two columns, and
// the carets move with it; a wide character takes two columns.
std::string snippet(const Diagnostic& d, const SourceFile& f, const std::string& num, const std::string& pad) {
  std::string_view line = f.line_text(d.span.line);
  size_t line_begin = f.line_starts[d.span.line - 1];
  size_t b = std::min<size_t>(d.span.begin - line_begin, line.size());
  size_t e = std::min<size_t>(std::max<size_t>(d.span.end, d.span.begin) - line_begin, line.size());
  // Which cells the span covers, and how many the line has, without making
  // them: a line can be megabytes long and only kShownWidth cells are shown.
  size_t total = 0, first = 0, last = 0;
  for (size_t i = 0; i < line.size(); i += cell_bytes(line, i), ++total) {
    if (i < b) first = total + 1;
    if (i < e) last = total + 1;
  }
  last = std::max(last, first + 1);
  size_t from = 0, to = total;
  std::string before, after;
  if (total > kShownWidth) {
    from = first > kContextBefore ? std::min(first - kContextBefore, total - kShownWidth) : 0;
    to = from + kShownWidth;
    if (from > 0) before = "...";
    if (to < total) after = "...";
  }
  size_t begin_byte = 0, end_byte = 0;
  for (size_t k = 0; end_byte < line.size() && k < to; ++k) {
    if (k == from) begin_byte = end_byte;
    end_byte += cell_bytes(line, end_byte);
  }
  std::vector<PrintableCell> cells = printable_cells(line.substr(begin_byte, end_byte - begin_byte));
  std::string shown;
  for (const auto& c : cells) shown += c.text;
  size_t lead = columns(cells, 0, std::min(first, to) - from);
  size_t len = std::max<size_t>(1, columns(cells, std::min(first, to) - from, std::min(last, to) - from));
  std::string out = fmt::format("{} |\n", pad);
  out += fmt::format("{} | {}{}{}\n", num, before, shown, after);
  out += fmt::format("{} | {}{}\n", pad, std::string(before.size() + lead, ' '), std::string(len, '^'));
  return out;
}

std::string rendered_notes(const Diagnostic& d, const std::string& pad) {
  std::string out;
  for (size_t i = 0; i < d.notes.size() && i < kListShown; ++i)
    out += fmt::format("{}= {}\n", pad, printable(d.notes[i]));
  if (d.notes.size() > kListShown) out += fmt::format("{}= {}\n", pad, more_items(d.notes.size()));
  return out;
}
}  // namespace

std::string render(const Diagnostic& d) {
  std::string out = fmt::format("error[{}]: {}\n", code_info(d.code).name, printable(d.message));
  size_t width = 1;
  if (d.span.valid()) {
    const SourceFile& f = Sources::global().get(d.span.file);
    std::string num = std::to_string(d.span.line);
    width = num.size();
    std::string pad(width, ' ');
    out += fmt::format("{}--> {}:{}:{}\n", pad, printable(f.display), d.span.line, d.span.col);
    out += snippet(d, f, num, pad);
  }
  std::string pad(width + 1, ' ');
  out += rendered_notes(d, pad);
  if (!d.help.empty()) out += fmt::format("{}= help: {}\n", pad, printable(d.help));
  return out;
}

std::string render(const UserError& e) {
  const auto& diags = e.diagnostics();
  std::string out;
  for (size_t i = 0; i < diags.size() && i < kListShown; ++i) out += render(diags[i]);
  if (diags.size() > kListShown) out += fmt::format("{} errors\n", more_items(diags.size()));
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
