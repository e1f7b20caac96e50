#include "util/toolkit_libraries.h"

#include <glob.h>

#include <algorithm>
#include <cstdlib>

namespace sx {

std::vector<std::string> glob_newest_first(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::vector<std::string> toolkit_library_candidates(const std::string& soname,
                                                    const std::vector<std::string>& toolkit_dirs,
                                                    const std::vector<std::string>& venv_subfolders) {
  std::vector<std::string> out{soname};
  for (const auto& dir : toolkit_dirs) out.push_back("/usr/local/cuda/" + dir + soname);
  for (const auto& dir : toolkit_dirs)
    for (auto& p : glob_newest_first("/usr/local/cuda-*/" + dir + soname)) out.push_back(std::move(p));
  std::vector<std::string> venvs;
  if (const char* v = std::getenv("VIRTUAL_ENV"); v && *v) venvs.emplace_back(v);
  venvs.emplace_back("/opt/torch/.venv");
  std::vector<std::string> sites;
  for (const auto& venv : venvs) sites.push_back(venv + "/lib/python3*/site-packages/");
  // The machine's own python3 (a CUDA image's holds PyTorch and NVIDIA's wheels there).
  for (const char* s : {"/usr/local/lib/python3*/dist-packages/", "/usr/local/lib/python3*/site-packages/",
                        "/usr/lib/python3/dist-packages/"})
    sites.emplace_back(s);
  for (const auto& site : sites)
    for (const auto& sub : venv_subfolders)
      for (auto& p : glob_newest_first(site + sub + soname)) out.push_back(std::move(p));
  return out;
}

}  // namespace sx
