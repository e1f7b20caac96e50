#include "lang/error_list.h"

#include <algorithm>

namespace sx {

UserError in_file_order(std::vector<Diagnostic> errors) {
  SX_ASSERT(!errors.empty(), "no errors to report");
  std::stable_sort(errors.begin(), errors.end(), [](const Diagnostic& a, const Diagnostic& b) {
    auto key = [](const Diagnostic& d) {
      return d.span.valid() ? std::pair<int64_t, int64_t>{d.span.file, d.span.begin}
                            : std::pair<int64_t, int64_t>{-1, 0};
    };
    return key(a) < key(b);
  });
  // A declaration's error can be met twice (a loader finalized by (vocab L) and again by the run): said once.
  auto same = [](const Diagnostic& a, const Diagnostic& b) {
    return a.code == b.code && a.message == b.message && a.span.file == b.span.file && a.span.begin == b.span.begin;
  };
  errors.erase(std::unique(errors.begin(), errors.end(), same), errors.end());
  if (errors.size() > kMaxReportedErrors) {
    size_t more = errors.size() - kMaxReportedErrors;
    errors.resize(kMaxReportedErrors);
    errors.back().notes.push_back(fmt::format("and {} more error{}", more, more == 1 ? "" : "s"));
  }
  return UserError(std::move(errors));
}

}  // namespace sx
