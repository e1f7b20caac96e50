// libFuzzer target: read and evaluate arbitrary text at compile time, with a
// small work budget so every input finishes quickly. A UserError is the
// expected answer to bad input; anything else is a finding. Files named by
// `require` are resolved against the working directory: run it in an empty one
// (fuzz/run.sh does).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lang/interp.h"
#include "reader/reader.h"
#include "util/error.h"

#include "big_stack_worker.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sx_fuzz::BigStackWorker::get().run([&] {
    try {
      sx::Interp in(100000);
      for (const auto& form : sx::read_string(text, "fuzz.sx")) {
        sx::ValueP v = in.eval(form, in.globals());
        (void)sx::repr(*v);
      }
    } catch (const sx::UserError& e) {
      for (const auto& d : e.diagnostics()) (void)sx::render(d);
    }
  });
  return 0;
}
