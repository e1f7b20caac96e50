#pragma once
// `sexpgpu run`: one training session in this process, from the experiment
// file to the summary, with every line and record of outputs.md.
#include <string>

#include "lang/selection.h"
#include "util/environment.h"

namespace sx {

struct RunRequest {
  std::string file;
  std::string shown;  // how the outputs name the experiment (a bundle's path); empty: `file`
  const std::string& shown_file() const { return shown.empty() ? file : shown; }
  std::string display;  // how errors name the file (a bundle's "b.sxb:exp/run.sx"); empty: `file`
  Selection selection;
  Environment env;
  bool json = false;  // the summary as one JSON line on standard output
};

// Returns the process exit status: 0 done, 1 failed after the first step
// began, 2 refused before it, 128 + n stopped by signal n.
int run_session(const RunRequest& req);

}  // namespace sx
