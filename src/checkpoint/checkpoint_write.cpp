// Writing a checkpoint atomically, and deleting old ones (checkpoints.md,
// "Atomic, always"). Every step leaves the run folder in a state a reader
// resolves to a complete checkpoint:
//   1. the files go into step-<n>.partial-<pid>/, each durable, COMPLETE last;
//   2. an existing complete step-<n> is renamed aside to step-<n>.old-<pid>
//      (find_latest falls back to it while step-<n> is missing);
//   3. the partial folder is renamed to step-<n>, durably;
//   4. the old one is deleted, then leftovers of earlier writes are cleaned.
#include <chrono>

#include "checkpoint/checkpoint.h"
#include "checkpoint/folders.h"
#include "util/error.h"

namespace sx::ckpt {
namespace {

// Makes the complete folder `partial` visible as `final`.
void install(CheckpointStore& store, const std::string& partial, const std::string& final, int64_t step) {
  if (!store.exists(final, kCompleteFile)) {
    store.remove(final);  // an incomplete one: a delete that was cut short
    store.rename(partial, final);
    return;
  }
  std::string old = old_folder(step);
  store.remove(old);
  store.rename(final, old);
  try {
    store.rename(partial, final);
  } catch (const UserError&) {
    try {
      store.rename(old, final);
    } catch (const UserError&) {
    }
    throw;
  }
  try {
    store.remove(old);
  } catch (const UserError&) {
    // The new one is complete; the next write cleans the old one.
  }
}

// Deletes what interrupted writes left; puts back a replaced checkpoint whose
// replacement never arrived. Best effort: the new checkpoint is complete.
void clean_leftovers(CheckpointStore& store) {
  try {
    for (const std::string& name : store.list()) {
      auto f = parse_folder(name);
      if (!f || f->kind == FolderKind::step) continue;
      if (f->kind == FolderKind::old && !store.exists(step_folder(f->step), kCompleteFile) &&
          store.exists(name, kCompleteFile)) {
        store.remove(step_folder(f->step));
        store.rename(name, step_folder(f->step));
      } else {
        store.remove(name);
      }
    }
  } catch (const UserError&) {
  }
}

void write_and_install(CheckpointStore& store, int64_t step, const std::string& model,
                       const std::string& optimizer, const std::string& state_text,
                       const std::string& complete);

}  // namespace

WriteResult write_checkpoint(CheckpointStore& store, const CheckpointData& data) {
  auto start = std::chrono::steady_clock::now();
  SX_ASSERT(data.step >= 0, "a checkpoint's step is negative");
  SX_ASSERT(data.state.is_object() || data.state.is_null(), "a checkpoint's state is not a JSON object");
  const std::map<std::string, std::string> meta{{"format", "pt"}};
  std::string model = st::encode(data.model, meta);
  std::string optimizer = st::encode(data.optimizer, meta);
  nlohmann::ordered_json state = data.state.is_null() ? nlohmann::ordered_json::object() : data.state;
  state["step"] = data.step;
  state["files"] = {{kModelFile, sha256_hex(model)}, {kOptimizerFile, sha256_hex(optimizer)}};
  // A data file's name that is not UTF-8 is written as U+FFFD, not refused
  // with an exception at the first checkpoint (a resume then names the shard it cannot find).
  std::string state_text = state.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  std::string complete = sha256_hex(state_text) + "  " + kStateFile + "\n";

  std::string final = step_folder(data.step);
  if (store.writes_in_place()) {
    // S3: no cheap rename. A checkpoint of this step already there is deleted
    // (COMPLETE first) so old and new objects are never taken for one
    // checkpoint; the new one counts once COMPLETE is uploaded, last.
    store.remove(final);
    store.put(final, kModelFile, model);
    store.put(final, kOptimizerFile, optimizer);
    store.put(final, kStateFile, state_text);
    store.put(final, kCompleteFile, complete);
  } else {
    write_and_install(store, data.step, model, optimizer, state_text, complete);
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  int64_t bytes = static_cast<int64_t>(model.size() + optimizer.size() + state_text.size() + complete.size());
  return {store.where(final), bytes, took.count()};
}

namespace {

// Local: into step-<n>.partial-<pid>/, COMPLETE last, then renamed (install).
void write_and_install(CheckpointStore& store, int64_t step, const std::string& model,
                       const std::string& optimizer, const std::string& state_text,
                       const std::string& complete) {
  std::string final = step_folder(step), partial = partial_folder(step);
  try {
    store.remove(partial);  // this process's own, from an earlier failed attempt
    store.put(partial, kModelFile, model);
    store.put(partial, kOptimizerFile, optimizer);
    store.put(partial, kStateFile, state_text);
    store.put(partial, kCompleteFile, complete);
    install(store, partial, final, step);
  } catch (const UserError&) {
    try {
      store.remove(partial);
    } catch (const UserError&) {
    }
    throw;
  }
  clean_leftovers(store);
}

}  // namespace

WriteResult write_checkpoint(const Location& location, const std::string& slug, const CheckpointData& data) {
  auto store = open_store(location, slug);
  return write_checkpoint(*store, data);
}

void keep_newest(CheckpointStore& store, int64_t keep) {
  if (keep <= 0) return;
  std::vector<std::pair<int64_t, std::string>> complete, incomplete;
  for (const std::string& name : store.list()) {
    auto f = parse_folder(name);
    if (!f || f->kind != FolderKind::step) continue;
    (store.exists(name, kCompleteFile) ? complete : incomplete).emplace_back(f->step, name);
  }
  if (complete.empty()) return;
  std::sort(complete.rbegin(), complete.rend());
  size_t kept = std::min(complete.size(), static_cast<size_t>(keep));
  int64_t oldest_kept = complete[kept - 1].first;
  for (size_t i = kept; i < complete.size(); ++i) store.remove(complete[i].second);
  for (const auto& [step, name] : incomplete)
    if (step < oldest_kept) store.remove(name);
}

void keep_newest(const Location& location, const std::string& slug, int64_t keep) {
  auto store = open_store(location, slug);
  keep_newest(*store, keep);
}

}  // namespace sx::ckpt
