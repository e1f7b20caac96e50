#pragma once
// Tests against a real S3 server: tests/s3/moto.py (moto, authentication on),
// started once per test binary on a free port and stopped when it exits. Tests
// call SX_REQUIRE_MOTO(), which skips with the reason when moto is absent.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "s3/client.h"
#include "util/error.h"
#include "util/environment.h"

namespace sx::s3::testing {

struct Moto {
  std::string endpoint;
  S3Credentials data, checkpoint;
  std::string data_bucket, checkpoint_bucket;
  pid_t pid = -1;
  int stdin_fd = -1;
  std::string why_not;  // set when there is no server

  ~Moto() {
    if (stdin_fd >= 0) ::close(stdin_fd);  // moto.py stops when its stdin closes
    if (pid > 0) {
      for (int i = 0; i < 50 && ::waitpid(pid, nullptr, WNOHANG) == 0; ++i) ::usleep(20'000);
      if (::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
    }
  }
};

inline S3Credentials credentials(S3Role role, const std::string& endpoint, const std::string& key,
                                 const std::string& secret) {
  return S3Credentials{role, Secret(key, "AWS_ACCESS_KEY_ID"),       Secret(secret, "AWS_SECRET_ACCESS_KEY"),
                       {},   Resolved{endpoint, "AWS_ENDPOINT_URL"}, Resolved{"us-east-1", "AWS_REGION"}};
}

inline Moto* start_moto(bool auth) {
  auto* m = new Moto;
  const char* dir = std::getenv("SEXPGPU_SOURCE_DIR");
  std::string script = std::string(dir ? dir : SEXPGPU_SOURCE_DIR_DEFAULT) + "/tests/s3/moto.py";
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) return m->why_not = "pipe failed", m;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_WRONLY);
    if (!std::getenv("SX_MOTO_LOG")) ::dup2(null, 2);
    ::close(in[1]), ::close(out[0]);
    ::execlp("python3", "python3", script.c_str(), auth ? "--auth" : (char*)nullptr, (char*)nullptr);
    ::_exit(127);
  }
  ::close(in[0]), ::close(out[1]);
  m->pid = pid, m->stdin_fd = in[1];
  ::fcntl(in[1], F_SETFD, FD_CLOEXEC);
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 500) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("endpoint")) {
    m->why_not = "moto (python3 tests/s3/moto.py) did not start: is the Python package moto installed?";
    return m;
  }
  m->endpoint = j["endpoint"];
  m->data = credentials(S3Role::data, m->endpoint, j["data"]["key"], j["data"]["secret"]);
  m->checkpoint = credentials(S3Role::checkpoint, m->endpoint, j["checkpoint"]["key"], j["checkpoint"]["secret"]);
  m->data_bucket = j["buckets"]["data"];
  m->checkpoint_bucket = j["buckets"]["checkpoint"];
  return m;
}

// The server of this test binary; its why_not says why there is none. moto's
// verifier rejects some valid signatures (%2F in a query value, so every LIST
// of a prefix with '/'), so only credential tests use the one with auth on.
// The UserError that `f` throws; a test failure when it throws none.
template <typename F>
UserError error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no UserError";
  return UserError(Code::S3_005, {}, "none");
}

inline const Moto& moto() {
  static std::unique_ptr<Moto> m(start_moto(false));
  return *m;
}
inline const Moto& moto_auth() {
  static std::unique_ptr<Moto> m(start_moto(true));
  return *m;
}

// A client of a role with quick retries.
inline std::shared_ptr<Client> test_client(const S3Credentials& creds) {
  Config c = config_from(creds);
  c.backoff_base_ms = 5;
  c.backoff_max_ms = 50;
  c.connect_timeout_ms = 2000;
  return std::make_shared<Client>(c);
}

// A key prefix unique to the running test.
inline std::string test_prefix() {
  auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(t->test_suite_name()) + "/" + t->name() + "/" + std::to_string(::getpid());
}

}  // namespace sx::s3::testing

#define SX_REQUIRE_MOTO_AUTH()                                                                                   \
  do {                                                                                                           \
    if (!::sx::s3::testing::moto_auth().why_not.empty()) GTEST_SKIP() << ::sx::s3::testing::moto_auth().why_not; \
  } while (0)

#define SX_REQUIRE_MOTO()                                                                              \
  do {                                                                                                 \
    if (!::sx::s3::testing::moto().why_not.empty()) GTEST_SKIP() << ::sx::s3::testing::moto().why_not; \
  } while (0)
