// libFuzzer target: the bundle reader (bundle::extract) over arbitrary bytes.
// The first byte picks what the rest is:
//   even  a tar archive, zstd-compressed here, so the fuzzer explores members
//         and manifests rather than the compressed stream
//   odd   the .sxb file's bytes as they are
// A UserError (an E-CLI-04x refusal) is the expected answer to bad input;
// anything else is a finding, and so is any file left outside the extraction
// folder or the folder itself left after the call.
#include <unistd.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "bundle/bundle.h"
#include "util/error.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const fs::path work = fs::temp_directory_path() / ("fuzz-bundle-" + std::to_string(::getpid()));
  static const fs::path parent = work / "tmp";
  fs::create_directories(parent);
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    std::string z(ZSTD_compressBound(bytes.size()), '\0');
    size_t n = ZSTD_compress(z.data(), z.size(), bytes.data(), bytes.size(), 1);
    if (ZSTD_isError(n)) __builtin_trap();
    bytes = z.substr(0, n);
  }
  const fs::path file = work / "in.sxb";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  try {
    auto x = sx::bundle::extract(file.string(), parent.string());
    if (!fs::is_directory(x->root())) __builtin_trap();
  } catch (const sx::UserError&) {
  }
  // Nothing but the input beside the folder, and the folder empty again.
  for (const auto& e : fs::directory_iterator(work))
    if (e.path() != file && e.path() != parent) __builtin_trap();
  if (!fs::is_empty(parent)) __builtin_trap();
  return 0;
}
