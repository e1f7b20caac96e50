// libFuzzer target: what a resume reads from state.json, over arbitrary
// bytes. The first byte picks the way in:
//   even  the bytes as JSON straight into check_resume_state
//   odd   the bytes as the state.json of a checkpoint folder (in memory),
//         re-sealed: "step" and "files" are fixed up and COMPLETE vouches for
//         it, so the integrity check passes and only the meaning is checked
// The expectations are those of tests/e2e/resume.sx (two training loaders,
// two passes, three stages). A UserError (E-CKPT-053, or E-CKPT-024/025 from
// the folder reader) is the expected answer to bad input; anything else (a
// crash, a sanitizer report, an nlohmann exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "checkpoint/resume_state.h"
#include "util/error.h"

namespace {

using Json = nlohmann::ordered_json;

const sx::ckpt::ResumeExpectations kExpected{{"train", "train-b"}, {"eval", "probe"}, 3};

void check(const Json& state) {
  sx::ckpt::ResumeState r = sx::ckpt::check_resume_state(state, kExpected, "state.json");
  // What the session does with an accepted state must be safe.
  if (r.stage < 0 || r.stage >= kExpected.stages) __builtin_trap();
  if (r.positions.size() != kExpected.loaders.size()) __builtin_trap();
  if (r.records < 0 || r.tokens < r.records || r.tokens > sx::ckpt::kMaxCounter) __builtin_trap();
}

void through_folder(Json state) {
  auto store = sx::ckpt::memory_store();
  sx::ckpt::CheckpointData d;
  d.step = 7;
  d.model["w"] = {{2}, {1, 2}};
  sx::ckpt::write_checkpoint(*store, d);
  const std::string folder = "step-7";
  Json written = Json::parse(*store->read(folder, sx::ckpt::kStateFile));
  state["step"] = 7;
  state["files"] = written["files"];
  std::string text = state.dump(1, ' ', false, Json::error_handler_t::replace);
  store->put(folder, sx::ckpt::kStateFile, text);
  store->put(folder, sx::ckpt::kCompleteFile, sx::sha256_hex(text) + "  state.json\n");
  check(sx::ckpt::read_checkpoint(*store, folder).state);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  Json state = Json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (state.is_discarded()) return 0;
  try {
    if (data[0] % 2 == 0 || !state.is_object())
      check(state);
    else
      through_folder(std::move(state));
  } catch (const sx::UserError& e) {
    for (const auto& d : e.diagnostics()) (void)sx::render(d);
  }
  return 0;
}
