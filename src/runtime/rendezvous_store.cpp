#include "runtime/rendezvous_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/error.h"

namespace sx {

namespace {

// A frame: u32 length, then the body. A request's body: op, u32 key length,
// key, value; a reply's: status, value.
constexpr char kSet = 'S', kGet = 'G';
constexpr char kOk = '1', kMissing = '0', kTaken = 'T';

std::string where_text(const Rendezvous& r) {
  return r.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", r.host, r.port)
                                               : fmt::format("{}:{}", r.host, r.port);
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::string frame(const std::string& body) {
  std::string out;
  put_u32(out, static_cast<uint32_t>(body.size()));
  return out + body;
}

bool send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool recv_all(int fd, char* out, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::recv(fd, out + done, bytes - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

addrinfo* resolve(const Rendezvous& where, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  std::string port = std::to_string(where.port);
  int rc = getaddrinfo(where.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0)
    throw UserError(
        passive ? Code::NODE_006 : Code::NODE_003, {},
        fmt::format("SEXPGPU_RENDEZVOUS {}: the host does not resolve ({})", where_text(where), gai_strerror(rc)),
        "give node 0's address or a name every node resolves");
  return res;
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

// ---- the server ------------------------------------------------------------------

RendezvousServer::RendezvousServer(const Rendezvous& where) {
  addrinfo* res = resolve(where, /*passive=*/true);
  std::string why = "no address";
  for (addrinfo* a = res; a && listen_fd_ < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
      listen_fd_ = fd;
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
      port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(res);
  if (listen_fd_ < 0)
    throw UserError(Code::NODE_006, {},
                    fmt::format("node 0 cannot listen on SEXPGPU_RENDEZVOUS {}: {}", where_text(where), why),
                    "choose a free port, the same on every node, and an address of node 0's machine");
  if (::pipe2(wake_, O_CLOEXEC) != 0) SX_ASSERT(false, "pipe2 failed");
  thread_ = std::thread([this] { serve(); });
}

RendezvousServer::~RendezvousServer() {
  char c = 'x';
  if (::write(wake_[1], &c, 1) < 0) {
  }
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void RendezvousServer::serve() {
  struct Client {
    int fd;
    std::string in;
  };
  std::vector<Client> clients;
  for (;;) {
    std::vector<pollfd> fds = {{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& c : clients) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    const size_t polled = fds.size() - 2;  // a client accepted below was not polled this time
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        no_delay(fd);
        clients.push_back({fd, {}});
      }
    }
    for (size_t i = 0; i < polled; ++i) {
      if (!fds[i + 2].revents) continue;
      Client& c = clients[i];
      char buf[65536];
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      bool open = n > 0;
      if (open) c.in.append(buf, static_cast<size_t>(n));
      // Every complete request is answered at once, in one write.
      while (open && c.in.size() >= 4 && c.in.size() >= 4 + get_u32(c.in.data())) {
        uint32_t len = get_u32(c.in.data());
        std::string body = c.in.substr(4, len);
        c.in.erase(0, 4 + len);
        if (body.size() < 5) {
          open = false;
          break;
        }
        uint32_t klen = get_u32(body.data() + 1);
        if (5 + klen > body.size()) {
          open = false;
          break;
        }
        std::string key = body.substr(5, klen), value = body.substr(5 + klen);
        std::string reply;
        if (body[0] == kSet) {
          reply = values_.emplace(key, value).second ? std::string(1, kOk) : std::string(1, kTaken);
        } else {
          auto it = values_.find(key);
          reply = it == values_.end() ? std::string(1, kMissing) : std::string(1, kOk) + it->second;
        }
        open = send_all(c.fd, frame(reply));
      }
      if (!open) c.fd = -(c.fd + 1);  // closed below
    }
    for (auto& c : clients)
      if (c.fd < 0) ::close(-(c.fd + 1));
    std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
  }
  for (auto& c : clients) ::close(c.fd);
}

// ---- the client ------------------------------------------------------------------

RendezvousClient::RendezvousClient(const Rendezvous& where, Clock::time_point deadline) : where_(where_text(where)) {
  std::string why;
  for (;;) {
    addrinfo* res = resolve(where, /*passive=*/false);
    for (addrinfo* a = res; a && fd_ < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        why = std::strerror(errno);
        ::close(fd);
      }
    }
    freeaddrinfo(res);
    if (fd_ >= 0) break;
    if (Clock::now() >= deadline)
      throw UserError(Code::NODE_003, {},
                      fmt::format("node 0 could not be reached at SEXPGPU_RENDEZVOUS {} within SEXPGPU_NODE_TIMEOUT "
                                  "({})",
                                  where_, why),
                      "start node 0 (SEXPGPU_NODE_RANK=0) with the same SEXPGPU_RENDEZVOUS, or check the address");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  no_delay(fd_);
}

RendezvousClient::~RendezvousClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RendezvousClient::request(char op, const std::string& key, const std::string& value) {
  std::string body(1, op);
  put_u32(body, static_cast<uint32_t>(key.size()));
  body += key;
  body += value;
  char len[4];
  if (send_all(fd_, frame(body)) && recv_all(fd_, len, 4)) {
    std::string reply(get_u32(len), '\0');
    if (recv_all(fd_, reply.data(), reply.size()) && !reply.empty()) return reply;
  }
  throw UserError(Code::NODE_003, {},
                  fmt::format("node 0 left the meeting at SEXPGPU_RENDEZVOUS {} before it ended", where_),
                  "see node 0's error; start every node again");
}

void RendezvousClient::set_timeout(std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool RendezvousClient::set(const std::string& key, const std::string& value) {
  return request(kSet, key, value)[0] == kOk;
}

std::optional<std::string> RendezvousClient::get(const std::string& key) {
  std::string reply = request(kGet, key, "");
  if (reply[0] != kOk) return std::nullopt;
  return reply.substr(1);
}

std::optional<std::string> RendezvousClient::wait(const std::string& key, Clock::time_point deadline) {
  for (;;) {
    if (auto v = get(key)) return v;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace sx
