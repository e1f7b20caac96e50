// The syvain client's background thread: batches of NDJSON records, at least
// every 2 s or at 500 records, the segments earlier runs left spooled first;
// 409 resends from acked_through + 1, 413 halves the batch, 5xx/429 and lost
// answers back off (honouring Retry-After), and after a lost answer the
// segment's acked_through is asked before anything is resent.
#include <iostream>

#include "runtime/metrics_syvain_client.h"
#include "util/printable.h"

namespace sx::report {

namespace {

constexpr auto kBatchEvery = std::chrono::seconds(2);

std::optional<int64_t> acked_through(const net::HttpResponse& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("acked_through") && j["acked_through"].is_number_integer())
    return j["acked_through"].get<int64_t>();
  return std::nullopt;
}

}  // namespace

bool SyvainClient::all_sent() const {
  for (const auto& [id, seg] : segments_)
    if (!seg.unacked.empty() && !seg.stuck) return false;
  return true;
}

// The segment whose records go next: an earlier one first, this session's
// when it has a batch's worth, 2 s have passed, or the run is ending.
SyvainClient::Segment* SyvainClient::next_to_send(std::unique_lock<std::mutex>& lk) {
  for (;;) {
    if (cancel_ || stopped_sending_) return nullptr;
    Segment* own = nullptr;
    for (auto& [id, seg] : segments_) {
      if (seg.unacked.empty() || seg.stuck) continue;
      if (id != own_) return &seg;
      own = &seg;
    }
    auto now = std::chrono::steady_clock::now();
    if (own && (draining_ || own->unacked.size() >= kBatchRecords || now - last_batch_ >= kBatchEvery)) return own;
    if (draining_ && all_sent()) drained_.notify_all();
    wake_.wait_for(lk, own ? kBatchEvery - (now - last_batch_) : kBatchEvery);
  }
}

void SyvainClient::send_loop() {
  for (;;) {
    std::unique_lock lk(mu_);
    Segment* seg = next_to_send(lk);
    if (!seg) {
      drained_.notify_all();
      return;
    }
    std::string id = seg->id;
    if (seg->ask_first) {
      lk.unlock();
      if (ask_acked(id) == Outcome::retry) retry_wait(nullptr);
      continue;
    }
    std::string body;
    size_t lines = 0;
    for (const auto& r : seg->unacked) {
      if (lines >= batch_limit_ || (lines > 0 && body.size() + r.line.size() > kBatchBytes)) break;
      body += r.line;
      ++lines;
    }
    last_batch_ = std::chrono::steady_clock::now();
    lk.unlock();
    send_batch(id, body, lines);
  }
}

void SyvainClient::retry_wait(const net::HttpResponse* answer) {
  ++failures_;
  net::sleep_unless_cancelled(backoff_.delay(failures_, answer), &cancel_);
}

void SyvainClient::refused_line(long status, const std::string& url) {
  std::lock_guard lock(mu_);
  if (stopped_sending_) return;
  stopped_sending_ = true;
  std::cerr << one_line(fmt::format("metrics: syvain refused the records (HTTP {} at {}); they stay spooled\n", status,
                                    without_userinfo(url)));
  drained_.notify_all();
}

SyvainClient::Outcome SyvainClient::ask_acked(const std::string& id) {
  std::string url = experiment_url() + "/segments/" + net::percent_encode(id, false);
  try {
    net::HttpResponse r = net::perform_once(pool_, syvain_request(settings_, "GET", url), transport_);
    if (auto n = acked_through(r); r.status == 200 && n) {
      acknowledge(id, *n);
      std::lock_guard lock(mu_);
      segments_.at(id).ask_first = false;
      failures_ = 0;
      return Outcome::acked;
    }
    if (r.status == 401 || r.status == 403 || r.status == 404) {
      refused_line(r.status, url);
      return Outcome::stop;
    }
  } catch (const net::TransferFailure&) {
  }
  return Outcome::retry;
}

SyvainClient::Outcome SyvainClient::send_batch(const std::string& id, const std::string& body, size_t lines) {
  std::string url = experiment_url() + "/segments/" + net::percent_encode(id, false) + "/records";
  net::HttpRequest req = syvain_request(settings_, "POST", url);
  req.headers.push_back("Content-Type: application/x-ndjson");
  req.body = body;
  net::HttpResponse r;
  try {
    r = net::perform_once(pool_, req, transport_);
  } catch (const net::TransferFailure& f) {
    if (f.cancelled()) return Outcome::stop;
    {
      std::lock_guard lock(mu_);
      segments_.at(id).ask_first = true;  // the batch may have been stored: ask before resending
    }
    retry_wait(nullptr);
    return Outcome::retry;
  }
  auto n = acked_through(r);
  if (r.status == 200 && n) {
    acknowledge(id, *n);
    failures_ = 0;
    return Outcome::acked;
  }
  if (r.status == 409 && n) {
    acknowledge(id, *n);  // the next batch starts at acked_through + 1
    std::lock_guard lock(mu_);
    Segment& seg = segments_.at(id);
    if (!seg.unacked.empty() && seg.unacked.front().seq > *n + 1) seg.stuck = true;  // a gap this client cannot fill
    return Outcome::retry;
  }
  if (r.status == 413) {
    if (lines == 1) {  // one record too large for the service: it stays spooled
      std::lock_guard lock(mu_);
      segments_.at(id).stuck = true;
    }
    batch_limit_ = std::max<size_t>(1, std::min(batch_limit_, lines) / 2);
    return Outcome::retry;
  }
  if (net::retryable_status(r.status)) {
    retry_wait(&r);
    return Outcome::retry;
  }
  if (r.status == 401 || r.status == 403 || r.status == 404 || r.status == 400) {
    refused_line(r.status, url);
    return Outcome::stop;
  }
  retry_wait(&r);  // 200 without acked_through, or an answer the protocol does not have
  return Outcome::retry;
}

void SyvainClient::acknowledge(const std::string& id, int64_t through) {
  std::lock_guard lock(mu_);
  Segment& seg = segments_.at(id);
  size_t before = seg.unacked.size();
  while (!seg.unacked.empty() && seg.unacked.front().seq <= through) seg.unacked.pop_front();
  if (seg.unacked.size() != before) seg.spool->rewrite(seg.unacked);
  if (draining_ && all_sent()) drained_.notify_all();
}

}  // namespace sx::report
