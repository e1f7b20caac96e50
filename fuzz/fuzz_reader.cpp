// libFuzzer target: the reader over arbitrary bytes. A UserError (an E-READ
// refusal) is the expected answer to bad input; anything else — a crash, a
// sanitizer report, another exception, a hang — is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reader/reader.h"
#include "util/error.h"

#include "big_stack_worker.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // The CLI reads on a big stack (nesting up to 10,000 levels); so does this.
  sx_fuzz::BigStackWorker::get().run([&] {
    try {
      auto forms = sx::read_string(text, "fuzz.sx");
      // Every datum renders, and every span points into the text.
      for (const auto& f : forms) {
        (void)sx::repr(*f);
        if (f->span.valid() && f->span.end > size) __builtin_trap();
      }
    } catch (const sx::UserError& e) {
      // Rendering the error (source line, carets) must not crash either.
      for (const auto& d : e.diagnostics()) (void)sx::render(d);
    }
  });
  return 0;
}
