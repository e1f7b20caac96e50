// The syvain target: the pre-flight, the spool-then-queue of each record,
// the drain at exit and what a checkpoint carries.
#include "runtime/metrics_syvain.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "runtime/metrics_syvain_client.h"
#include "util/printable.h"
#include "util/version.h"

namespace sx::report {

namespace {

std::optional<SyvainSettings> prepared;  // by syvain_preflight, for open_syvain_target

class SyvainTarget final : public MetricsTarget {
 public:
  explicit SyvainTarget(SyvainSettings s) : client_(std::move(s)) {}
  // Never fails a run: a record the service does not take stays spooled.
  std::optional<AppendFailure> append(std::string line) override {
    client_.append(line);
    return std::nullopt;
  }
  std::string where() const override { return client_.experiment_url(); }
  std::string describe() const override { return client_.experiment_url(); }
  std::string line() const override {
    return fmt::format("syvain folder {} {}", client_.settings().folder, client_.experiment_url());
  }
  void attach(const std::string& slug, const std::string& segment) override { client_.attach(slug, segment); }
  nlohmann::ordered_json unacknowledged() const override { return client_.unacknowledged(); }
  void carry(const nlohmann::ordered_json& carried) override { client_.carry(carried); }

 private:
  SyvainClient client_;
};

}  // namespace

net::HttpRequest syvain_request(const SyvainSettings& s, const char* method, std::string url) {
  net::HttpRequest r;
  r.method = method;
  r.url = std::move(url);
  r.headers = {"Authorization: Bearer " + s.key.reveal(), std::string("User-Agent: sexpgpu/") + SEXPGPU_VERSION};
  return r;
}

std::string folder_url(const SyvainSettings& s) { return s.base + "/folders/" + net::percent_encode(s.folder, false); }

SyvainProbe probe_syvain(const Environment& env) {
  SyvainSettings s;
  s.base = env.syvain_url;
  while (s.base.ends_with('/')) s.base.pop_back();
  s.folder = env.syvain_folder();
  s.key = env.syvain_api_key;
  s.spool_root = spool_root();
  net::curl_api(Code::METRICS_002, "the syvain metrics target");
  std::string url = folder_url(s);
  std::string shown = without_userinfo(url);
  net::Transport t;
  t.connect_timeout_ms = 5'000;
  t.request_timeout_ms = 5'000;
  net::HandlePool pool;
  SyvainProbe probe;
  probe.folder = s.folder;
  try {
    net::HttpResponse r = net::perform_once(pool, syvain_request(s, "GET", url), t);
    auto refuse = [&](Code code, const std::string& what, const std::string& help) {
      probe.refused = UserError(
          code, {}, fmt::format("syvain {} folder {} (HTTP {} at {})", what, s.folder, r.status, shown), help);
    };
    if (r.status == 401)
      refuse(Code::METRICS_020, "refused the key (SYVAIN_METRICS_API_KEY) for",
             "check SYVAIN_METRICS_API_KEY (and SYVAIN_METRICS_URL when self-hosting)");
    else if (r.status == 403)
      refuse(Code::METRICS_021, "does not let this key write to", "use a folder this key may write to, or another key");
    else if (r.status == 404)
      refuse(Code::METRICS_022, "has no", "check syvain:<folder-id> or SYVAIN_METRICS_FOLDER_ID");
    else if (r.status != 200)
      probe.unreachable = fmt::format("HTTP {} at {}", r.status, shown);
  } catch (const net::TransferFailure& f) {
    probe.unreachable = fmt::format("{} at {}", without_userinfo(f.message), shown);
  }
  if (!probe.refused) prepared = std::move(s);
  return probe;
}

void syvain_preflight(const Environment& env) {
  SyvainProbe probe = probe_syvain(env);
  if (probe.refused) throw *probe.refused;
  if (!probe.unreachable.empty())
    std::cerr << one_line(fmt::format("metrics: syvain unreachable ({}); records are spooled\n", probe.unreachable));
}

std::unique_ptr<MetricsTarget> open_syvain_target() {
  SX_ASSERT(prepared.has_value(), "a syvain metrics target without its pre-flight");
  return std::make_unique<SyvainTarget>(*prepared);
}

// ---- the client's side of a step ---------------------------------------------

SyvainClient::SyvainClient(SyvainSettings settings) : settings_(std::move(settings)) {
  transport_.connect_timeout_ms = 5'000;
  transport_.request_timeout_ms = 30'000;
  transport_.stall_timeout_s = 15;
  transport_.cancel = &cancel_;
}

void SyvainClient::attach(const std::string& slug, const std::string& segment) {
  std::lock_guard lock(mu_);
  slug_ = slug;
  own_ = segment;
}

std::string SyvainClient::experiment_url() const {
  return without_userinfo(folder_url(settings_) + "/experiments/" + net::percent_encode(slug_, false));
}

SyvainClient::Segment& SyvainClient::segment(const std::string& id) {
  Segment& seg = segments_[id];
  if (!seg.spool) {
    seg.id = id;
    seg.spool = std::make_unique<SpoolFile>(spool_dir(settings_.spool_root, settings_.folder, slug_) + "/" +
                                            net::percent_encode(id, false) + ".ndjson");
  }
  return seg;
}

// Every segment an earlier run of this slug left spooled (and not held by a
// live run), sent before this session's records.
void SyvainClient::load_spooled() {
  if (loaded_) return;
  loaded_ = true;
  std::error_code ec;
  std::string dir = spool_dir(settings_.spool_root, settings_.folder, slug_);
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!name.ends_with(".ndjson")) continue;
    std::string id = name.substr(0, name.size() - 7);
    if (id == net::percent_encode(own_, false)) continue;
    auto file = std::make_unique<SpoolFile>(e.path().string());
    if (!file->take_over()) continue;
    Segment& seg = segments_[id];
    seg.id = id;
    for (auto& r : file->read())
      if (seg.unacked.empty() || r.seq > seg.unacked.back().seq) seg.unacked.push_back(std::move(r));
    seg.spool = std::move(file);
    seg.ask_first = true;  // most of it may be stored already
  }
}

void SyvainClient::carry(const nlohmann::ordered_json& carried) {
  std::lock_guard lock(mu_);
  load_spooled();
  if (!carried.is_array()) return;
  for (const auto& c : carried) {
    if (!c.is_object() || !c.contains("segment") || !c["segment"].is_string() || !c.contains("records")) continue;
    std::string id = c["segment"];
    if (id == own_) continue;
    bool known = segments_.count(id) > 0;
    Segment& seg = segment(id);
    if (known) continue;  // this machine's spool has what is left of it
    for (const auto& rec : c["records"])
      if (rec.is_object() && rec.contains("seq") && rec["seq"].is_number_integer()) {
        SpooledRecord r{rec["seq"].get<int64_t>(),
                        rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"};
        seg.spool->append(r.line);
        seg.unacked.push_back(std::move(r));
      }
    seg.ask_first = true;
  }
}

void SyvainClient::append(const std::string& line) {
  std::unique_lock lock(mu_);
  // A run stopped before its file was compiled has no slug, so no experiment to send its summary to.
  if (own_.empty()) return;
  if (!thread_.joinable()) {
    load_spooled();
    thread_ = std::thread([this] { send_loop(); });
  }
  SpooledRecord r{++next_seq_, line};
  size_t close = r.line.rfind('}');
  SX_ASSERT(close != std::string::npos, "a metrics record that is not a JSON object");
  r.line.insert(close, fmt::format(",\"seq\":{}", r.seq));
  Segment& seg = segment(own_);
  if (!seg.spool->append(r.line) && !spool_warned_) {
    spool_warned_ = true;
    std::cerr << one_line(fmt::format("metrics: cannot spool to {} ({}); records are kept in memory only\n",
                                      seg.spool->path(), std::strerror(errno)));
  }
  seg.unacked.push_back(std::move(r));
  if (seg.unacked.size() >= kBatchRecords) wake_.notify_all();
}

nlohmann::ordered_json SyvainClient::unacknowledged() const {
  std::lock_guard lock(mu_);
  auto out = nlohmann::ordered_json::array();
  for (const auto& [id, seg] : segments_) {
    if (seg.unacked.empty()) continue;
    auto recs = nlohmann::ordered_json::array();
    for (const auto& r : seg.unacked) recs.push_back(nlohmann::ordered_json::parse(r.line, nullptr, false));
    out.push_back({{"segment", id}, {"records", std::move(recs)}});
  }
  return out;
}

SyvainClient::~SyvainClient() {
  if (!thread_.joinable()) return;
  std::unique_lock lock(mu_);
  draining_ = true;
  wake_.notify_all();
  drained_.wait_for(lock, std::chrono::seconds(10), [&] { return all_sent() || stopped_sending_; });
  cancel_ = true;  // a request in flight is abandoned within 20 ms
  wake_.notify_all();
  lock.unlock();
  thread_.join();
  lock.lock();
  size_t left = 0, files = 0;
  std::string where;
  for (const auto& [id, seg] : segments_)
    if (!seg.unacked.empty()) {
      left += seg.unacked.size();
      ++files;
      where = seg.spool->path();
    }
  if (files > 1) where = spool_dir(settings_.spool_root, settings_.folder, slug_);
  if (left > 0)
    std::cerr << one_line(fmt::format("metrics: {} {} spooled to {}, sent on the next run\n", left,
                                      left == 1 ? "record" : "records", where));
}

}  // namespace sx::report
