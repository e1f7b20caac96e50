// libFuzzer target: the checkpoint reader over arbitrary bytes. The first byte
// picks which file of a checkpoint folder (in memory) the rest becomes:
//   0  state.json alone, through parse_state
//   1  state.json of a folder, with a COMPLETE that vouches for it, so the
//      fields, the files map and the step-<n> name check are reached
//   2  model.safetensors, with a state.json whose hash matches, so the
//      safetensors decoder is reached through the folder reader
//   3  COMPLETE
// A UserError (an E-CKPT refusal) is the expected answer to bad input;
// anything else (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "util/error.h"

namespace {

using sx::ckpt::CheckpointData;

void check(const CheckpointData& d) {
  if (d.state["step"].get<int64_t>() != d.step) __builtin_trap();
  (void)d.state.dump();
}

// A complete folder step-7 in a memory store, then `file` replaced by `bytes`
// (and, unless the file is COMPLETE, everything that vouches for it fixed up).
void read_folder(int mode, std::string_view bytes) {
  auto store = sx::ckpt::memory_store();
  CheckpointData d;
  d.step = 7;
  d.model["w"] = {{2}, {1, 2}};
  sx::ckpt::write_checkpoint(*store, d);
  const std::string folder = "step-7";
  std::string state_text(bytes);
  if (mode == 2) {
    store->put(folder, sx::ckpt::kModelFile, bytes);
    auto state = nlohmann::ordered_json::parse(*store->read(folder, sx::ckpt::kStateFile));
    state["files"][sx::ckpt::kModelFile] = sx::sha256_hex(bytes);
    state_text = state.dump();
  }
  if (mode == 3) {
    store->put(folder, sx::ckpt::kCompleteFile, bytes);
  } else {
    store->put(folder, sx::ckpt::kStateFile, state_text);
    store->put(folder, sx::ckpt::kCompleteFile, sx::sha256_hex(state_text) + "  state.json\n");
  }
  check(sx::ckpt::read_checkpoint(*store, folder));
  (void)sx::ckpt::find_latest(*store);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int mode = data[0] % 4;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (mode == 0) {
      auto state = sx::ckpt::parse_state(bytes, "state.json");
      (void)state.dump();
    } else {
      read_folder(mode, bytes);
    }
  } catch (const sx::UserError& e) {
    for (const auto& d : e.diagnostics()) (void)sx::render(d);
  }
  return 0;
}
