#include <cctype>
#include <string>

#include "backend/cuda/codegen/prelude.h"

namespace sx::cuda::codegen {

namespace {

// A kernel instance: its name (without the element type), its parameters and
// the template it calls, with `T` standing for the element type.
struct Instance {
  const char* name;
  const char* params;
  const char* call;
  bool per_type;  // an f32 and a bf16 instance; false: f32 only
};

constexpr Instance kInstances[] = {
    {"layernorm_fwd",
     "T* y, float* mean, float* rstd, const T* x, const float* gain, const float* bias, int d, float eps",
     "sx_norm_fwd_row<B, true, T, T>(y, mean, rstd, x, gain, bias, d, eps)", true},
    {"layernorm_bwd", "T* dx, const T* dy, const T* x, const float* mean, const float* rstd, const float* gain, int d",
     "sx_norm_bwd_row<B, true, T, T>(dx, dy, x, mean, rstd, gain, d)", true},
    {"layernorm_bwd_params",
     "float* dgain, float* dbias, const T* dy, const T* x, const float* mean, const float* rstd, int rows, int d",
     "sx_norm_bwd_params<B, true, T, T>(dgain, dbias, dy, x, mean, rstd, rows, d)", true},
    {"rmsnorm_fwd", "T* y, float* rstd, const T* x, const float* gain, int d, float eps",
     "sx_norm_fwd_row<B, false, T, T>(y, (float*)0, rstd, x, gain, (const float*)0, d, eps)", true},
    {"rmsnorm_bwd", "T* dx, const T* dy, const T* x, const float* rstd, const float* gain, int d",
     "sx_norm_bwd_row<B, false, T, T>(dx, dy, x, (const float*)0, rstd, gain, d)", true},
    {"rmsnorm_bwd_params", "float* dgain, const T* dy, const T* x, const float* rstd, int rows, int d",
     "sx_norm_bwd_params<B, false, T, T>(dgain, (float*)0, dy, x, (const float*)0, rstd, rows, d)", true},
    {"softmax_fwd", "T* y, const T* x, int d", "sx_softmax_fwd_row<B, T, T>(y, x, d)", true},
    {"softmax_bwd", "T* dx, const T* dy, const T* y, int d", "sx_softmax_bwd_row<B, T, T>(dx, dy, y, d)", true},
    {"cross_entropy",
     "float* loss_rows, T* dlogits, const T* logits, const int* targets, const float* dloss, float inv_rows, int vocab",
     "sx_cross_entropy_row<B, T, T>(loss_rows, dlogits, logits, targets, dloss, inv_rows, vocab)", true},
    {"mean_rows", "float* out, const float* in, int n", "sx_mean_row<B>(out, in, n)", false},
    {"attention_fwd",
     "T* out, float* lse, const T* q, const T* k, const T* v, int tq, int tk, int d, int dv, float scale, int causal",
     "sx_attention_fwd_row<B, K, T, T>(out, lse, q, k, v, tq, tk, d, dv, scale, causal)", true},
    {"attention_bwd_q",
     "T* dq, float* delta, const T* dout, const T* out, const T* q, const T* k, const T* v, const float* lse, int tq, "
     "int tk, int d, int dv, float scale, int causal",
     "sx_attention_bwd_q_row<B, K, T, T>(dq, delta, dout, out, q, k, v, lse, tq, tk, d, dv, scale, causal)", true},
    {"attention_bwd_kv",
     "T* dk, T* dv_out, const T* dout, const T* q, const T* k, const T* v, const float* lse, const float* delta, "
     "int tq, int tk, int d, int dv, float scale, int causal",
     "sx_attention_bwd_kv_row<B, K, T, T>(dk, dv_out, dout, q, k, v, lse, delta, tq, tk, d, dv, scale, causal)", true},
    {"adam",
     "const sx_param_slot* slots, int count, long long total, int decoupled, int clip, float coef, float b1, "
     "float b2, float one_minus_b1, float one_minus_b2, float bc2_sqrt, float eps, float step_size",
     "sx_adam_chunk<B, B * 4>(slots, count, total, decoupled, clip, coef, b1, b2, one_minus_b1, one_minus_b2, "
     "bc2_sqrt, eps, step_size)",
     false},
    {"sgd",
     "const sx_param_slot* slots, int count, long long total, int clip, float coef, float momentum, "
     "int first_step, int nesterov, float neg_lr",
     "sx_sgd_chunk<B, B * 4>(slots, count, total, clip, coef, momentum, first_step, nesterov, neg_lr)", false},
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// `T` as a whole word only (not the T of a longer name).
std::string with_type(const std::string& text, const std::string& type) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    bool word_before = i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
    bool word_after =
        i + 1 < text.size() && (std::isalnum(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '_');
    out += text[i] == 'T' && !word_before && !word_after ? type : std::string(1, text[i]);
  }
  return out;
}

}  // namespace

std::string template_instances_source(std::vector<std::string>* instance_names) {
  std::string out(prelude_source());
  out += norm_softmax_templates();
  out += loss_attention_templates();
  out += optimizer_templates();
  out += "\n#define B " + std::to_string(kRowBlock) + "\n#define K " + std::to_string(kAttentionMaxKeys) + "\n";
  for (const Instance& in : kInstances) {
    for (const char* type : {"f32", "bf16"}) {
      bool bf16 = std::string(type) == "bf16";
      if (bf16 && !in.per_type) continue;
      std::string name = std::string("sx_") + in.name + (in.per_type ? std::string("_") + type : "");
      std::string t = bf16 ? "sx_bf16" : "float";
      out += "extern \"C\" __global__ void __launch_bounds__(B) " + name + "(" + with_type(in.params, t) + ") {\n  " +
             with_type(in.call, t) + ";\n}\n";
      if (instance_names) instance_names->push_back(name);
    }
  }
  out += "#undef B\n#undef K\n";
  return replace_all(out, "\r", "");
}

}  // namespace sx::cuda::codegen
