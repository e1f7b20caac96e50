#pragma once
// The syvain client's parts (metrics_syvain.cpp: the pre-flight and the
// target; metrics_syvain_sender.cpp: the background thread and the protocol).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "net/http.h"
#include "runtime/metrics_spool.h"
#include "util/environment.h"

namespace sx::report {

struct SyvainSettings {
  std::string base;    // SYVAIN_METRICS_URL, no trailing '/'
  std::string folder;  // the folder id
  Secret key;          // only ever in the Authorization header
  std::string spool_root;
};

// A request to the service, with its Authorization and User-Agent headers.
net::HttpRequest syvain_request(const SyvainSettings& s, const char* method, std::string url);
// <base>/folders/<folder>
std::string folder_url(const SyvainSettings& s);

class SyvainClient {
 public:
  explicit SyvainClient(SyvainSettings settings);
  // At most 10 s for the queue to drain, then one line saying what is left spooled.
  ~SyvainClient();
  SyvainClient(const SyvainClient&) = delete;
  SyvainClient& operator=(const SyvainClient&) = delete;

  void attach(const std::string& slug, const std::string& segment);
  // Spools, then queues, one record (a jsonl line ending in '\n'); the step never waits.
  void append(const std::string& line);
  nlohmann::ordered_json unacknowledged() const;
  void carry(const nlohmann::ordered_json& carried);
  std::string experiment_url() const;
  const SyvainSettings& settings() const { return settings_; }

  // Above these a batch is sent without waiting for the 2 s.
  static constexpr size_t kBatchRecords = 500;
  static constexpr size_t kBatchBytes = 1 << 20;

 private:
  struct Segment {
    std::string id;
    std::deque<SpooledRecord> unacked;  // in seq order
    std::unique_ptr<SpoolFile> spool;
    bool stuck = false;      // the service is missing records this client no longer has: left spooled
    bool ask_first = false;  // an answer was lost: ask acked_through before resending
  };
  enum class Outcome { acked, retry, stop };

  Segment& segment(const std::string& id);  // mu_ held
  void load_spooled();                      // mu_ held, once, before the thread starts
  void send_loop();
  Segment* next_to_send(std::unique_lock<std::mutex>& lk);
  Outcome send_batch(const std::string& id, const std::string& body, size_t lines);
  Outcome ask_acked(const std::string& id);
  void acknowledge(const std::string& id, int64_t through);
  bool all_sent() const;  // mu_ held
  void refused_line(long status, const std::string& url);
  void retry_wait(const net::HttpResponse* answer);

  SyvainSettings settings_;
  std::string slug_, own_;
  net::HandlePool pool_;
  net::Transport transport_;
  net::Backoff backoff_{500, 30'000, net::Backoff::Jitter::twenty_percent};
  int failures_ = 0;                    // consecutive, for the backoff (sender thread only)
  size_t batch_limit_ = kBatchRecords;  // halved by a 413

  mutable std::mutex mu_;
  std::condition_variable wake_, drained_;
  std::map<std::string, Segment> segments_;  // by id: ids start with their start time, so older first
  int64_t next_seq_ = 0;
  bool loaded_ = false, draining_ = false, stopped_sending_ = false;
  std::atomic<bool> cancel_{false};
  bool spool_warned_ = false;
  std::chrono::steady_clock::time_point last_batch_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

}  // namespace sx::report
