// One client per role, made once from the credentials the run was given.
#include <map>
#include <mutex>

#include "s3/client.h"

namespace sx::s3 {

namespace {

std::mutex registry_mu;
std::map<S3Role, S3Credentials> registry_creds;
std::map<S3Role, const std::atomic<bool>*> registry_cancel;
std::map<S3Role, std::shared_ptr<Client>> registry_clients;

}  // namespace

void set_credentials(const S3Credentials& creds, const std::atomic<bool>* cancel) {
  std::lock_guard lock(registry_mu);
  registry_creds[creds.role] = creds;
  registry_cancel[creds.role] = cancel;
  registry_clients.erase(creds.role);
}

void set_client(S3Role role, std::shared_ptr<Client> client) {
  std::lock_guard lock(registry_mu);
  registry_clients[role] = std::move(client);
}

std::shared_ptr<Client> client_for(S3Role role, std::string_view needed_by) {
  std::lock_guard lock(registry_mu);
  if (auto it = registry_clients.find(role); it != registry_clients.end() && it->second) return it->second;
  auto it = registry_creds.find(role);
  S3Credentials creds = it != registry_creds.end() ? it->second : S3Credentials{role, {}, {}, {}, {}, {}};
  require_s3(creds, needed_by);
  Config config = config_from(creds);
  config.cancel = registry_cancel[role];
  auto client = std::make_shared<Client>(std::move(config));
  registry_clients[role] = client;
  return client;
}

}  // namespace sx::s3
