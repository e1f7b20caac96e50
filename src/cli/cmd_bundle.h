#pragma once
// The FILE of run, check, explain and knobs: an experiment file, or a bundle
// (`.sxb`) checked and extracted into a private temporary folder that lives as
// long as this does; outputs stay relative to the working directory.
#include <memory>
#include <string>

#include "bundle/bundle.h"
#include "cli/args.h"

namespace sx {

struct ExperimentArg {
  std::string file;     // what to compile: the .sx, or the bundle's extracted experiment
  std::string shown;    // how outputs name it: as given on the command line
  std::string display;  // how errors name the experiment: "b.sxb:exp/run.sx"; empty for a file
  std::unique_ptr<bundle::Extracted> bundle;
};

// A `.sxb` is opened as a bundle (E-CLI-042..046 before anything runs).
ExperimentArg experiment_argument(const ParsedArgs& args, const std::string& command);

// The selection: a bundle's own, with the command line's flags on top (a
// --variant, --steps, --eval-every or --diagnostics given replaces the
// bundle's; each --set is applied after the bundle's, so it wins).
Selection selection_for(const ExperimentArg& x, const ParsedArgs& args, const Environment& env);

}  // namespace sx
