// sexpgpu bundle FILE [selection] [-o out.sxb] [--no-data]: the experiment,
// everything it requires and its data in one archive that `sexpgpu run`
// runs elsewhere with the same numbers.
#include <filesystem>
#include <iostream>

#include "bundle/bundle.h"
#include "cli/commands.h"
#include "driver/compile.h"
#include "s3/client.h"
#include "util/memory.h"
#include "util/printable.h"
#include "util/stop_signals.h"

namespace sx {

const std::vector<FlagSpec>& bundle_flags() {
  static const std::vector<FlagSpec> flags = [] {
    std::vector<FlagSpec> f = selection_flags();
    f.push_back({"-o", "OUT.sxb", "where to write the bundle (default <slug>.sxb in the working directory)"});
    f.push_back({"--no-data", "", "leave local data out: record each file's path, size and SHA-256, checked when run"});
    return f;
  }();
  return flags;
}

ExitStatus cmd_bundle(const ParsedArgs& args) {
  const std::string& file = file_argument(args, "bundle");
  Environment env = command_environment(args);
  s3::set_credentials(env.s3_data, StopSignals::flag());
  Selection sel = selection_from(args, env);
  // Compiled as `check` would: a bundle of an experiment that cannot run is refused here.
  Compiled c = compile(file, sel, compile_options(env, StopSignals::flag()));
  bundle::Packing p = bundle::collect(file, *c.interp, sel, args.has("--no-data"));
  std::string out = args.last("-o").value_or(c.x->slug + ".sxb");
  bundle::write_bundle(out, p);
  uint64_t packed = 0, referenced = 0;
  for (const auto& f : p.manifest.files) packed += f.bytes;
  for (const auto& r : p.manifest.references) referenced += r.bytes;
  std::string data = p.manifest.references.empty() ? ""
                                                   : fmt::format(", {} data files by reference ({})",
                                                                 p.manifest.references.size(), bytes_text(referenced));
  if (!p.manifest.s3.empty()) data += fmt::format(", {} s3:// objects by ETag", p.manifest.s3.size());
  std::cout << one_line(fmt::format("bundle: {} slug {}: {} files ({}){}, {}\n", out, c.x->slug,
                                    p.manifest.files.size(), bytes_text(packed), data,
                                    bytes_text(std::filesystem::file_size(out))));
  return ExitStatus::done;
}

}  // namespace sx
