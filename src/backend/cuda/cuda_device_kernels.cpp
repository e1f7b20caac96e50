#include "backend/cuda/cuda_device_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "backend/cuda/codegen/print_cuda.h"
#include "lang/experiment.h"
#include "util/glob.h"

namespace sx::cuda {

const std::vector<std::string>& kernel_compile_options() {
  static const std::vector<std::string> options{"--fmad=false"};
  return options;
}

KernelCache& process_kernel_cache() {
  static KernelCache cache(KernelCache::default_dir());
  return cache;
}

const KernelResources* CompiledProgramSet::resources(size_t i, const std::string& name) const {
  const Entry& e = programs.at(static_cast<size_t>(program_of.at(i)));
  auto it = std::find_if(e.resources.begin(), e.resources.end(), [&](const auto& r) { return r.name == name; });
  return it == e.resources.end() ? nullptr : &*it;
}

CompiledProgramSet compile_kernels(const Nvrtc& nvrtc, KernelCache& cache, const std::string& arch,
                                   const std::vector<const kir::Kernel*>& kernels, const std::string& name,
                                   KernelCounters& tally) {
  CompiledProgramSet out;
  if (kernels.empty()) return out;
  // NVRTC pays ~60 ms a program and ~10 ms a kernel in it: as few programs as
  // there are cores to compile them side by side.
  const size_t cores = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::set<std::string> names;
  for (const kir::Kernel* k : kernels) names.insert(k->name);
  const size_t per_program = std::clamp<size_t>((names.size() + cores - 1) / cores, 1, 64);
  std::vector<codegen::ProgramText> texts = codegen::print_programs(kernels, per_program, &out.program_of);
  out.programs.resize(texts.size());

  std::mutex failed_mutex;
  std::exception_ptr failed;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < texts.size();) {
      try {
        ProgramRequest req{texts.size() == 1 ? name : fmt::format("{}-{}", name, i), texts[i].source, arch,
                           kernel_compile_options()};
        bool cached = false;
        CompiledProgram p = cache.get(nvrtc, req, &cached);
        CompiledProgramSet::Entry& e = out.programs[i];
        e.program.cubin = std::move(p.cubin);
        e.program.kernels = texts[i].kernels;
        e.cached = cached;
        e.resources = std::move(p.kernels);
      } catch (...) {
        std::lock_guard lock(failed_mutex);
        if (!failed) failed = std::current_exception();
      }
    }
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(cores, texts.size()); ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool any_compiled = false;
  for (const auto& e : out.programs) {
    (e.cached ? tally.hits : tally.compiled) += static_cast<int>(e.program.kernels.size());
    any_compiled = any_compiled || !e.cached;
  }
  if (any_compiled) tally.compile_seconds += seconds;
  return out;
}

GraphCode compile_graph(const Nvrtc& nvrtc, KernelCache& cache, const std::string& arch, const Lowering& lowering,
                        const std::vector<Call>& calls, const std::vector<kir::Kernel>& optimizer,
                        const std::string& name, KernelCounters& tally) {
  GraphCode out;
  std::vector<const kir::Kernel*> kernels;
  for (const Call& c : calls) {
    out.kernel_of_call.push_back(c.is_gemm ? -1 : static_cast<int>(kernels.size()));
    if (!c.is_gemm) kernels.push_back(&c.kernel);
  }
  for (const kir::Kernel& k : optimizer) {
    out.optimizer.push_back(static_cast<int>(kernels.size()));
    kernels.push_back(&k);
  }
  out.set = compile_kernels(nvrtc, cache, arch, kernels, name, tally);
  CompiledLaunches& r = out.launches;
  r.resources.resize(lowering.launches.size());
  auto count = [&](size_t launch, size_t kernel) {
    const kir::Kernel& k = *kernels[kernel];
    const auto& program = out.set.programs[static_cast<size_t>(out.set.program_of[kernel])];
    ++(program.cached ? r.cached : r.compiled);
    if (const KernelResources* res = out.set.resources(kernel, k.name)) r.resources[launch] = *res;
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    if (!c.is_gemm && !lowering.launches[static_cast<size_t>(c.from_launch)].cublas())
      count(static_cast<size_t>(c.from_launch), static_cast<size_t>(out.kernel_of_call[i]));
  }
  for (size_t i = 0; i < lowering.launches.size(); ++i) {
    if (lowering.launches[i].kind != LaunchKind::Optimizer) continue;
    for (size_t j = 0; j < optimizer.size(); ++j)
      if (optimizer[j].name == lowering.launches[i].name) count(i, static_cast<size_t>(out.optimizer[j]));
  }
  return out;
}

std::vector<kir::Kernel> optimizer_kernels(const std::vector<ParamInfo>& params, const OptimizerSpec& spec,
                                           bool bf16_copies) {
  kir::OptimizerParams o;
  o.algorithm = spec.kind == "sgd"    ? kir::Optimizer::Algorithm::Sgd
                : spec.kind == "adam" ? kir::Optimizer::Algorithm::Adam
                                      : kir::Optimizer::Algorithm::AdamW;
  o.clip = spec.clip.value_or(0.0);
  o.nesterov = spec.nesterov, o.momentum = spec.momentum != 0;
  o.bf16_copies = bf16_copies;
  std::vector<const ParamInfo*> sorted;
  for (const auto& p : params) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->path < b->path; });
  for (const ParamInfo* p : sorted) {
    bool decays = true;
    for (const auto& g : spec.no_decay) decays = decays && !model_path_glob_match(g, p->path);
    o.tensors.push_back({p->path, p->shape.numel(), decays});
  }
  std::vector<kir::Kernel> out;
  out.push_back(kir::build_optimizer(o, kir::Optimizer::Stage::GradNorm, "optimizer_grad_norm"));
  out.push_back(kir::build_optimizer(o, kir::Optimizer::Stage::Update, "optimizer_multi_tensor_update"));
  return out;
}

}  // namespace sx::cuda
