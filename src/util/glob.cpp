#include "util/glob.h"

#include <fnmatch.h>

#include <string>

namespace sx {

bool model_path_glob_match(std::string_view g, std::string_view t) {
  // Greedy with one backtrack point: the last `*` seen absorbs one more
  // character each time the rest fails to match.
  size_t gi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (gi < g.size() && (g[gi] == '?' || g[gi] == t[ti])) {
      ++gi, ++ti;
    } else if (gi < g.size() && g[gi] == '*') {
      star = gi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      gi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == '*') ++gi;
  return gi == g.size();
}

bool diagnostic_glob_match(std::string_view g, std::string_view t) {
  if (g.empty()) return t.empty();
  if (g[0] == '*') {
    for (size_t k = 0; k <= t.size(); ++k) {
      if (diagnostic_glob_match(g.substr(1), t.substr(k))) return true;
      if (k < t.size() && t[k] == '/') break;  // a star stays within its segment
    }
    return false;
  }
  return !t.empty() && (g[0] == '?' ? t[0] != '/' : g[0] == t[0]) && diagnostic_glob_match(g.substr(1), t.substr(1));
}

bool source_glob_match(std::string_view glob, std::string_view key) {
  return ::fnmatch(std::string(glob).c_str(), std::string(key).c_str(), FNM_PATHNAME) == 0;
}

}  // namespace sx
