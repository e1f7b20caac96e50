#pragma once
// Where a library of the CUDA toolkit may be found when it is loaded at run
// time (NVRTC, cuBLASLt, NCCL): one search order for all of them, so that
// they are looked for in the same places and said in the same order.
#include <string>
#include <vector>

namespace sx {

// The paths matching a glob(3) pattern, in reverse lexical order: for
// /usr/local/cuda-*/, the newest toolkit first (for one-digit minors).
std::vector<std::string> glob_newest_first(const std::string& pattern);

// `soname` itself (the dynamic loader's own search), then under each of
// `toolkit_dirs` (relative to /usr/local/cuda/ and then to every
// /usr/local/cuda-*/, newest first), then each Python environment's
// site-packages/<subfolder> ($VIRTUAL_ENV, then /opt/torch/.venv, then the
// system python3's dist- and site-packages), where pip's nvidia-* wheels put
// their libraries.
std::vector<std::string> toolkit_library_candidates(const std::string& soname,
                                                    const std::vector<std::string>& toolkit_dirs,
                                                    const std::vector<std::string>& venv_subfolders);

}  // namespace sx
