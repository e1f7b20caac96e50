#include "runtime/init_from.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "checkpoint/safetensors.h"
#include "lang/experiment.h"
#include "util/error.h"
#include "util/printable.h"

namespace sx {

namespace {

std::string shape_str(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

const char* kHelp =
    "the file must hold exactly the model's parameters, named by model path, with the model's shapes and a "
    "float dtype (F32, F16, BF16, F64); `sexpgpu explain` lists them";

}  // namespace

void apply_init_from(ParamStore& params, const std::string& path, Span span, const std::string& shown) {
  const std::string name = shown.empty() ? path : shown;
  std::string bytes;
  st::Header header;
  try {
    bytes = st::read_bytes(path);
    header = st::parse_header(bytes, name);
  } catch (UserError& e) {
    // Point the file's error at the :init-from that named it.
    if (!e.first().span.valid()) e.first().span = span;
    throw;
  }

  // Every difference, sorted by model path. An extra tensor's did-you-mean is
  // looked up only for the notes an error shows (kListShown of them): a file
  // with a million tensors must not cost a million edit-distance searches.
  struct Difference {
    std::string path, note;
    bool extra = false;
  };
  std::vector<Difference> diffs;
  std::vector<std::string> model_paths;
  for (const auto& p : params.info) model_paths.push_back(p.path);
  for (const auto& p : params.info) {
    auto it = header.entries.find(p.path);
    std::vector<int64_t> want = p.shape.vec();
    if (it == header.entries.end()) {
      diffs.push_back({p.path, fmt::format("missing: parameter `{}` {} is not in the file", p.path, shape_str(want))});
      continue;
    }
    const st::Entry& e = it->second;
    if (!st::is_float_dtype(e.dtype))
      diffs.push_back({p.path, fmt::format("dtype: `{}` is {} in the file; parameters are read from F32, F16, "
                                           "BF16 or F64",
                                           p.path, e.dtype)});
    if (e.shape != want)
      diffs.push_back({p.path, fmt::format("shape: `{}` is {} in the file but {} in the model", p.path,
                                           shape_str(e.shape), shape_str(want))});
  }
  for (const auto& [k, e] : header.entries) {
    if (std::find(model_paths.begin(), model_paths.end(), k) != model_paths.end()) continue;
    diffs.push_back(
        {k, fmt::format("extra: tensor `{}` {} {} is not a parameter of the model", k, e.dtype, shape_str(e.shape)),
         true});
  }
  if (!diffs.empty()) {
    std::stable_sort(diffs.begin(), diffs.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    Diagnostic d{Code::CKPT_007,
                 fmt::format("{} does not match the model's parameters: {} difference{}", name, diffs.size(),
                             diffs.size() == 1 ? "" : "s"),
                 span,
                 {},
                 kHelp};
    for (size_t i = 0; i < diffs.size(); ++i) {
      if (diffs[i].extra && i < kListShown)
        if (std::string near = nearest(diffs[i].path, model_paths); !near.empty())
          diffs[i].note += fmt::format(" (did you mean `{}`?)", near);
      d.notes.push_back(std::move(diffs[i].note));
    }
    throw UserError(std::move(d));
  }

  for (const auto& p : params.info) {
    st::TensorData t = st::read_tensor(bytes, header, p.path, name);
    std::vector<float>& dst = params.values.at(p.path);
    SX_ASSERT(dst.size() == t.values.size(), "init-from: a parameter's buffer disagrees with its shape");
    std::copy(t.values.begin(), t.values.end(), dst.begin());
  }
}

void apply_init_from(ParamStore& params, const RunDecl& run, const std::string& base_dir) {
  Span span = run.span;
  for (const auto& k : run.keys)
    if (k.key == "init-from") span = k.expr && k.expr->span.valid() ? k.expr->span : k.key_span;
  const std::string& given = run.init_from;
  if (given.rfind("s3://", 0) == 0)
    throw UserError(Code::CKPT_008, span,
                    fmt::format("`:init-from {}`: s3:// weights are not supported in this version", given),
                    "copy the object to local disk and point :init-from at it");
  std::filesystem::path p(given);
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  apply_init_from(params, p.string(), span, given);
}

}  // namespace sx
