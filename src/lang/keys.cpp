#include "lang/keys.h"

#include "util/error.h"

namespace sx {

const std::vector<DeclForm>& declaration_forms() {
  static const std::vector<DeclForm> forms = {
      {"defrun",
       "(defrun NAME :key value ...)",
       "the run; exactly one per file",
       {
           {"model", "a model", "required", "the defmodel to train"},
           {"loader", "a loader", "required", "the defloader the training steps read"},
           {"batch", "integer >= 1", "required", "records a step"},
           {"microbatches", "integer >= 1 dividing :batch", "1",
            "the step's records split into this many accumulated microbatches"},
           {"steps", "integer >= 1", "required", "optimizer steps of the run"},
           {"optimizer", "an optimizer", "required", "(adamw ...), (adam ...) or (sgd ...)"},
           {"precision", "f32, bf16 or tf32", "f32", "the precision of the training step"},
           {"seed", "integer >= 0", "0", "seeds the parameters' initialization, dropout and the data order"},
           {"diagnostics", "list of glob strings", "none", "the diagnostics computed and reported with each step"},
           {"checkpoint-every", "integer >= 1", "none",
            "a checkpoint every this many steps (with a location); without it, only after the last step and on a "
            "signal"},
           {"keep", "integer >= 1", "all", "checkpoints kept; older ones are deleted"},
           {"init-from", "string: a .safetensors path or s3:// URI", "none",
            "tensors, named by model path, that replace the initial parameters"},
       }},
      {"defeval",
       "(defeval NAME :key value ...)",
       "an evaluation pass; several allowed; `eval` is the usual name",
       {
           {"loader", "a loader", "required", "the defloader the pass reads, from its start, in order"},
           {"every", "integer >= 0", "0", "a pass every this many steps; 0: only the pass after the last step"},
           {"batches", "integer >= 1", "all", "batches a pass evaluates; all: every whole batch of the loader"},
           {"batch", "integer >= 1", "the run's :batch", "records a batch"},
       }},
      {"defloader",
       "(defloader NAME :key value ...)",
       "a data loader; its records are windows of :seq-len + 1 tokens",
       {
           {"source", "string: a path, glob, manifest or s3:// URI", "required",
            "the data; relative paths are relative to the experiment file"},
           {"format", "text, tokens-u16, tokens-u32 or jsonl", "text", "how the source's files are read"},
           {"tokenizer", "bytes, (chars \"...\") or (bpe \"tokenizer.json\")", "required for text and jsonl",
            "text to token ids; token formats take none"},
           {"seq-len", "integer >= 1", "required", "input tokens a record"},
           {"shuffle", "boolean", "true", "shuffle the records each epoch (from the run's seed)"},
           {"field", "string", "\"text\"", "the field of each jsonl object that holds the text"},
           {"vocab", "integer >= 1", "the tokenizer's; required for token formats",
            "the vocabulary size (vocab NAME) gives"},
       }},
      {"defmodel",
       "(defmodel NAME [tokens targets] body ...)",
       "the model: no keys; its inputs are record fields by name and its body returns the loss",
       {}},
      {"defknob",
       "(defknob NAME default :key value ...)",
       "a knob; its type is its default's (integer, float, string, symbol, boolean)",
       {
           {"doc", "string", "none", "one line shown by sexpgpu knobs"},
           {"choices", "non-empty list of the knob's type", "none", "the only values allowed"},
           {"min", "number", "none", "the smallest value allowed (number knobs)"},
           {"max", "number", "none", "the largest value allowed (number knobs)"},
       }},
      {"defvariant",
       "(defvariant NAME :knob value ...)",
       "a named set of knob values; its keys are knob names (declared knobs and run settings)",
       {}},
      {"defcurriculum",
       "(defcurriculum (stage \"NAME\" :key value ...) ...)",
       "the stages the run moves through; at most one per file; no keys of its own",
       {}},
      {"stage",
       "(stage \"NAME\" :key value ...)",
       "one stage of defcurriculum",
       {
           {"loader", "a loader", "the previous stage's (the run's for the first)",
            "the loader the training steps read from the next step on"},
           {"lr-scale", "number >= 0", "1.0", "multiplies the schedule's learning rate"},
           {"when", "expression", "required but for the first stage",
            "evaluated after each pass with the pass's metrics and step bound; true moves the run on"},
           {"pass", "a pass (or its name as a string)", "eval", "the pass after which :when is evaluated"},
       }},
      {"defsweep",
       "(defsweep :knob [values ...] ...)",
       "the grid sexpgpu sweep runs when no --set grid is given; its keys are knob names, each with a non-empty list "
       "of values (docs/sweep.md)",
       {}},
  };
  return forms;
}

std::vector<std::string> declaration_keys(std::string_view form) {
  for (const auto& f : declaration_forms())
    if (form == f.form) {
      std::vector<std::string> out;
      for (const auto& k : f.keys) out.emplace_back(k.name);
      return out;
    }
  SX_ASSERT(false, "no key table for declaration " + std::string(form));
  return {};
}

std::string declaration_keys_dump() {
  std::string out;
  for (const auto& f : declaration_forms()) {
    out += fmt::format("form\t{}\t{}\t{}\n", f.form, f.syntax, f.what);
    for (const auto& k : f.keys) out += fmt::format("key\t{}\t{}\t{}\t{}\n", k.name, k.type, k.dflt, k.meaning);
  }
  return out;
}

}  // namespace sx
