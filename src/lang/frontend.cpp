#include "lang/frontend.h"

#include "lang/declarations.h"
#include "lang/error_list.h"

namespace sx {

std::unique_ptr<Interp> load_experiment(const std::string& file, const Selection& sel, int64_t eval_limit,
                                        const std::atomic<bool>* stop_flag, const std::string& display) {
  auto in = std::make_unique<Interp>(eval_limit);
  in->stop_flag = stop_flag;
  in->selection = &sel;
  in->eval_file("std/core", "std/core.sx");
  // The declarations' errors found while evaluating come first in the report,
  // with whatever stopped the evaluation or the final checks.
  auto with_declaration_errors = [&](const UserError& e) {
    std::vector<Diagnostic> all = std::move(in->declaration_errors);
    for (const auto& d : e.diagnostics())
      if (d.code != Code::DEF_004) all.push_back(d);  // a defrun that failed is reported already
    return in_file_order(std::move(all));
  };
  try {
    in->eval_file(file, display.empty() ? file : display);
    finalize(*in, sel, file);
  } catch (const UserError& e) {
    if (in->declaration_errors.empty()) throw;
    throw with_declaration_errors(e);
  }
  if (!in->declaration_errors.empty()) throw in_file_order(std::move(in->declaration_errors));
  return in;
}

}  // namespace sx
