#pragma once
// What text may reach a terminal. Names, values and file contents are shown
// with every control character (ESC, NUL, CR, a newline inside a value, ...)
// and every byte that is not UTF-8 escaped, so that no input can move the
// cursor, set the terminal's title or forge a line of output; valid non-ASCII
// text (é, CJK) stays as it is. An endpoint's `user:password@` is never
// shown, and a message lists at most kListShown items. docs/errors.md states
// the rule for users.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sx {

// One code point (or one invalid byte) of a text as a terminal shows it.
struct PrintableCell {
  size_t byte;       // where it begins in the original text
  std::string text;  // the code point itself, or its escape: "\x1b", "\n", "\t", "\x80", "\u{202e}"
  size_t width;      // terminal columns: 1; 2 for wide (CJK) characters; 0 for combining marks
};
std::vector<PrintableCell> printable_cells(std::string_view s);
// The bytes of the cell that begins at s[i]: its code point's, or 1 for an invalid byte.
size_t cell_bytes(std::string_view s, size_t i);

// `s` with the escapes of printable_cells: "a\x1b]0;x\x07" for a\e]0;x\a.
// Backslashes are not doubled: the result is for reading, not parsing back.
std::string printable(std::string_view s);

// A line ready for the terminal: printable(text) with one trailing newline
// kept as a newline (any other newline in it is a value's, and escaped).
std::string one_line(std::string_view text);

// `text` with the userinfo of every URL in it ("http://user:secret@host/")
// replaced by "***" ("http://***@host/").
std::string without_userinfo(std::string_view text);

// At most kListShown items of a list, joined by `sep`, then " and N more".
constexpr size_t kListShown = 20;
std::string join_capped(const std::vector<std::string>& items, std::string_view sep);
// "and N more" when `total` items were cut to kListShown, else "".
std::string more_items(size_t total);

}  // namespace sx
