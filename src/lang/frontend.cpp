#include "lang/frontend.h"

#include "lang/declarations.h"

namespace sx {

std::unique_ptr<Interp> load_experiment(const std::string& file, const Selection& sel, int64_t eval_limit,
                                        const std::atomic<bool>* stop_flag) {
  auto in = std::make_unique<Interp>(eval_limit);
  in->stop_flag = stop_flag;
  in->selection = &sel;
  in->eval_file("std/core", "std/core.sx");
  in->eval_file(file, file);
  finalize(*in, sel, file);
  return in;
}

}  // namespace sx
