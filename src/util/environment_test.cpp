#include "util/environment.h"

#include <gtest/gtest.h>

#include "util/environment_test_util.h"
#include "util/error.h"

namespace sx {
namespace {
using namespace environment_test;

TEST(Environment, DefaultsWhenNothingIsSet) {
  Environment e = parse({});
  EXPECT_EQ(e.device, Device::cpu);
  EXPECT_EQ(e.device_source, "");
  EXPECT_TRUE(e.devices.empty());
  EXPECT_FALSE(e.metrics || e.status || e.checkpoint_dir || e.resume || e.diagnostics || e.run_slug);
  EXPECT_GE(e.threads, 1);
  EXPECT_EQ(e.eval_limit, 10'000'000);
  EXPECT_FALSE(e.memory_gib);
  EXPECT_FALSE(e.explain_kernels);
  EXPECT_EQ(e.nodes, 1);
  EXPECT_EQ(e.node_rank, 0);
  EXPECT_FALSE(e.rendezvous);
  EXPECT_EQ(e.node_gradients, GradientPrecision::f32);
  EXPECT_EQ(e.node_timeout_s, 300);
  EXPECT_EQ(e.syvain_url, "https://metrics.041.io/api/v1");
  EXPECT_FALSE(e.syvain_api_key.set());
  EXPECT_EQ(e.s3_data.missing().size(), 4u);
  EXPECT_EQ(e.s3_checkpoint.role, S3Role::checkpoint);
}

TEST(Environment, EmptyStringCountsAsUnset) {
  Vars vars;
  for (const auto& name : known_variables()) vars[name] = "";
  Environment e = parse(vars);
  EXPECT_EQ(e.device, Device::cpu);
  EXPECT_EQ(e.device_source, "");
  EXPECT_FALSE(e.metrics || e.status || e.checkpoint_dir || e.resume);
  EXPECT_EQ(e.eval_limit, 10'000'000);
  EXPECT_FALSE(e.syvain_api_key.set());
  // An empty role-specific value falls through to the next one.
  e = parse({{"SEXPGPU_DATA_AWS_REGION", ""}, {"SEXPGPU_AWS_REGION", ""}, {"AWS_REGION", "eu-west-1"}});
  EXPECT_EQ(e.s3_data.region.value, "eu-west-1");
  EXPECT_EQ(e.s3_data.region.variable, "AWS_REGION");
  // SEXPGPU_NODES=2 with an empty rendezvous is a missing rendezvous.
  auto d = errors({{"SEXPGPU_NODES", "2"}, {"SEXPGPU_RENDEZVOUS", ""}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, Code::ENV_002);
}

TEST(Environment, Device) {
  Environment e = parse({{"SEXPGPU_DEVICE", "cuda"}});
  EXPECT_EQ(e.device, Device::cuda);
  EXPECT_EQ(e.device_source, "SEXPGPU_DEVICE");
  EXPECT_EQ(parse({{"SEXPGPU_DEVICE", "cpu"}}).device, Device::cpu);
  auto d = errors({{"SEXPGPU_DEVICE", "tpu"}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, Code::ENV_001);
  EXPECT_EQ(d[0].message, "SEXPGPU_DEVICE: expected cpu or cuda, found \"tpu\"");
  EXPECT_EQ(d[0].help, "did you mean `cpu`?");
  EXPECT_FALSE(d[0].span.valid());
  EXPECT_EQ(errors({{"SEXPGPU_DEVICE", "CUDA"}})[0].help, "did you mean `cuda`?");
  EXPECT_NE(errors({{"SEXPGPU_DEVICE", "gpu-please"}})[0].help.find("cuda needs"), std::string::npos);
}

TEST(Environment, Devices) {
  EXPECT_EQ(parse({{"SEXPGPU_DEVICES", "0"}}).devices, (std::vector<int>{0}));
  EXPECT_EQ(parse({{"SEXPGPU_DEVICES", "3,1, 2"}}).devices, (std::vector<int>{3, 1, 2}));
  for (const char* bad : {"a", "0,,1", "0,", "-1", "0,0", "1.5", "99999999999999999999"})
    EXPECT_NE(errors({{"SEXPGPU_DEVICES", bad}})[0].message.find("SEXPGPU_DEVICES: expected"), std::string::npos)
        << bad;
  EXPECT_EQ(errors({{"SEXPGPU_DEVICES", "0,1,0"}})[0].help, "ordinal 0 appears twice");
}

TEST(Environment, Nodes) {
  Environment e = parse({{"SEXPGPU_NODES", "4"},
                         {"SEXPGPU_NODE_RANK", "3"},
                         {"SEXPGPU_RENDEZVOUS", "node0.lan:29500"},
                         {"SEXPGPU_NODE_GRADIENTS", "bf16"},
                         {"SEXPGPU_NODE_TIMEOUT", "12.5"}});
  EXPECT_EQ(e.nodes, 4);
  EXPECT_EQ(e.node_rank, 3);
  EXPECT_EQ(e.rendezvous->host, "node0.lan");
  EXPECT_EQ(e.rendezvous->port, 29500);
  EXPECT_EQ(e.node_gradients, GradientPrecision::bf16);
  EXPECT_EQ(e.node_timeout_s, 12.5);
  e = parse({{"SEXPGPU_NODES", "2"}, {"SEXPGPU_RENDEZVOUS", "[::1]:1234"}});
  EXPECT_EQ(e.rendezvous->host, "::1");

  auto d = errors({{"SEXPGPU_NODES", "2"}, {"SEXPGPU_NODE_RANK", "2"}, {"SEXPGPU_RENDEZVOUS", "h:1"}});
  EXPECT_EQ(d[0].message, "SEXPGPU_NODE_RANK: expected a node rank below SEXPGPU_NODES (2), found \"2\"");
  EXPECT_EQ(d[0].help, "ranks run from 0 to 1");
  d = errors({{"SEXPGPU_NODE_RANK", "1"}});
  EXPECT_NE(d[0].help.find("set SEXPGPU_NODES"), std::string::npos);
  d = errors({{"SEXPGPU_NODES", "3"}});
  EXPECT_EQ(d[0].code, Code::ENV_002);
  EXPECT_EQ(d[0].message, "SEXPGPU_NODES is 3 but SEXPGPU_RENDEZVOUS is not set");
  for (const char* bad : {"0", "-1", "two"}) EXPECT_EQ(errors({{"SEXPGPU_NODES", bad}}).size(), 1u) << bad;
  for (const char* bad : {"host", "host:", ":29500", "host:0", "host:65536", "host:http"})
    EXPECT_EQ(errors({{"SEXPGPU_RENDEZVOUS", bad}})[0].help, "e.g. SEXPGPU_RENDEZVOUS=node0.example.com:29500") << bad;
  EXPECT_EQ(errors({{"SEXPGPU_NODE_GRADIENTS", "bf61"}})[0].help, "did you mean `bf16`?");
  EXPECT_EQ(errors({{"SEXPGPU_NODE_TIMEOUT", "300s"}})[0].message,
            "SEXPGPU_NODE_TIMEOUT: expected a positive number of seconds, found \"300s\"");
  EXPECT_EQ(errors({{"SEXPGPU_NODE_TIMEOUT", "0"}}).size(), 1u);
}

TEST(Environment, Metrics) {
  Environment e = parse({{"SEXPGPU_METRICS", "jsonl:/tmp/my-run.jsonl"}});
  EXPECT_EQ(e.metrics->kind, MetricsTarget::Kind::jsonl);
  EXPECT_EQ(e.metrics->path, "/tmp/my-run.jsonl");
  EXPECT_EQ(e.metrics->text, "jsonl:/tmp/my-run.jsonl");
  EXPECT_EQ(e.metrics_source, "SEXPGPU_METRICS");
  EXPECT_EQ(parse({{"SEXPGPU_METRICS", "stdout"}}).metrics->kind, MetricsTarget::Kind::standard_output);
  e = parse({{"SEXPGPU_METRICS", "syvain"}, {"SYVAIN_METRICS_FOLDER_ID", "f-1"}});
  EXPECT_EQ(e.metrics->kind, MetricsTarget::Kind::syvain);
  EXPECT_EQ(e.metrics->folder_id, "");
  EXPECT_EQ(e.syvain_folder(), "f-1");
  e = parse({{"SEXPGPU_METRICS", "syvain:f-2"}, {"SYVAIN_METRICS_FOLDER_ID", "f-1"}});
  EXPECT_EQ(e.syvain_folder(), "f-2");  // syvain:<id> wins

  EXPECT_EQ(errors({{"SEXPGPU_METRICS", "json:/tmp/x"}})[0].help,
            "for a file, write SEXPGPU_METRICS=jsonl:json:/tmp/x");
  EXPECT_EQ(errors({{"SEXPGPU_METRICS", "sydvain:abc"}})[0].help, "did you mean `syvain:abc`?");
  EXPECT_EQ(errors({{"SEXPGPU_METRICS", "run.jsonl"}})[0].help, "for a file, write SEXPGPU_METRICS=jsonl:run.jsonl");
  for (const char* bad : {"jsonl", "jsonl:", "syvain:", "nowhere"})
    EXPECT_EQ(
        errors({{"SEXPGPU_METRICS", bad}})[0].message.rfind(
            "SEXPGPU_METRICS: expected jsonl:<path>, stdout, syvain, syvain:<folder-id> or tensorboard:<dir>, found",
            0),
        0u)
        << bad;
}

TEST(Environment, SyvainVariables) {
  Environment e = parse({{"SYVAIN_METRICS_API_KEY", "k-123"}, {"SYVAIN_METRICS_URL", "http://127.0.0.1:8080/api/"}});
  EXPECT_EQ(e.syvain_api_key.reveal(), "k-123");
  EXPECT_EQ(e.syvain_api_key.variable(), "SYVAIN_METRICS_API_KEY");
  EXPECT_EQ(e.syvain_url, "http://127.0.0.1:8080/api");
  EXPECT_EQ(errors({{"SYVAIN_METRICS_URL", "metrics.041.io"}})[0].message,
            "SYVAIN_METRICS_URL: expected an http:// or https:// URL, found \"metrics.041.io\"");
}

TEST(Environment, StatusSlugDiagnostics) {
  Environment e = parse({{"SEXPGPU_STATUS", "/tmp/s.json"},
                         {"SEXPGPU_RUN_SLUG", "base-lr=0.1"},
                         {"SEXPGPU_DIAGNOSTICS", "attention/*, logits/*"}});
  EXPECT_EQ(*e.status, "/tmp/s.json");
  EXPECT_EQ(e.status_source, "SEXPGPU_STATUS");
  EXPECT_EQ(*e.run_slug, "base-lr=0.1");
  EXPECT_EQ(*e.diagnostics, (std::vector<std::string>{"attention/*", "logits/*"}));
  EXPECT_EQ(errors({{"SEXPGPU_STATUS", "/tmp/"}}).size(), 1u);
  for (const char* bad : {"a/b", "..", ".hidden", "has space"})
    EXPECT_EQ(errors({{"SEXPGPU_RUN_SLUG", bad}}).size(), 1u) << bad;
  EXPECT_EQ(errors({{"SEXPGPU_DIAGNOSTICS", "a/*,,b"}})[0].help, "an item is empty");
}

TEST(Environment, NumbersAndWords) {
  Environment e = parse({{"SEXPGPU_EVAL_LIMIT", "20000000"},
                         {"SEXPGPU_THREADS", "3"},
                         {"SEXPGPU_MEMORY", "7.5"},
                         {"SEXPGPU_EXPLAIN", "kernels"}});
  EXPECT_EQ(e.eval_limit, 20'000'000);
  EXPECT_EQ(e.threads, 3);
  EXPECT_EQ(*e.memory_gib, 7.5);
  EXPECT_TRUE(e.explain_kernels);
  EXPECT_EQ(*parse({{"SEXPGPU_MEMORY", "12"}}).memory_gib, 12.0);

  auto d = errors({{"SEXPGPU_EVAL_LIMIT", "abc"}});
  EXPECT_EQ(d[0].message, "SEXPGPU_EVAL_LIMIT: expected a positive integer, found \"abc\"");
  EXPECT_EQ(d[0].help, "write the digits alone, e.g. SEXPGPU_EVAL_LIMIT=20000000");
  for (const char* bad : {"0", "-5", "+5", "1e7", "10_000", " 5", "99999999999999999999"})
    EXPECT_EQ(errors({{"SEXPGPU_EVAL_LIMIT", bad}}).size(), 1u) << bad;
  for (const char* bad : {"0", "four", "1.5"}) EXPECT_EQ(errors({{"SEXPGPU_THREADS", bad}}).size(), 1u) << bad;
  for (const char* bad : {"0", "0.0", "-1", "7.5GiB", ".", "1e3", "inf", "nan", "1.2.3"})
    EXPECT_EQ(errors({{"SEXPGPU_MEMORY", bad}}).size(), 1u) << bad;
  EXPECT_EQ(errors({{"SEXPGPU_MEMORY", "8G"}})[0].message,
            "SEXPGPU_MEMORY: expected a positive number of GiB, found \"8G\"");
  EXPECT_EQ(errors({{"SEXPGPU_EXPLAIN", "kernel"}})[0].help, "did you mean `kernels`?");
}

TEST(Environment, FoundValueIsQuotedAndEscaped) {
  auto d = errors({{"SEXPGPU_EVAL_LIMIT", "a\"b\n" + std::string(200, 'x')}});
  EXPECT_NE(d[0].message.find("\"a\\\"b\\x0a"), std::string::npos);
  EXPECT_NE(d[0].message.find("...\""), std::string::npos);
  EXPECT_LT(d[0].message.size(), 150u);
}

TEST(Environment, CheckpointDir) {
  Environment e = parse({{"SEXPGPU_CHECKPOINT_DIR", "ckpt/"}});
  EXPECT_FALSE(e.checkpoint_dir->s3);
  EXPECT_EQ(e.checkpoint_dir->text, "ckpt");
  EXPECT_EQ(e.checkpoint_dir_source, "SEXPGPU_CHECKPOINT_DIR");
  e = parse({{"SEXPGPU_CHECKPOINT_DIR", "s3://my-bucket/runs/a/"}});
  EXPECT_TRUE(e.checkpoint_dir->s3);
  EXPECT_EQ(e.checkpoint_dir->bucket, "my-bucket");
  EXPECT_EQ(e.checkpoint_dir->prefix, "runs/a");
  EXPECT_EQ(e.checkpoint_dir->text, "s3://my-bucket/runs/a");
  e = parse({{"SEXPGPU_CHECKPOINT_DIR", "s3://my-bucket"}});
  EXPECT_EQ(e.checkpoint_dir->prefix, "");
  for (const char* bad : {"s3://", "s3:/b/p", "S3:bucket", "s3://B/p", "s3://ab/p", "s3://b-1//p", "s3://b-1/../p"})
    EXPECT_EQ(errors({{"SEXPGPU_CHECKPOINT_DIR", bad}})[0].message.rfind(
                  "SEXPGPU_CHECKPOINT_DIR: expected a directory or s3://bucket/prefix, found", 0),
              0u)
        << bad;
}

TEST(Environment, Resume) {
  Environment e = parse({{"SEXPGPU_RESUME", "latest"}});
  EXPECT_TRUE(e.resume->latest);
  e = parse({{"SEXPGPU_RESUME", "ckpt/my-run/step-10"}});
  EXPECT_FALSE(e.resume->latest);
  EXPECT_EQ(e.resume->location.text, "ckpt/my-run/step-10");
  EXPECT_EQ(*e.resume->step, 10);
  EXPECT_FALSE(parse({{"SEXPGPU_RESUME", "elsewhere"}}).resume->step);
  e = parse({{"SEXPGPU_RESUME", "s3://bkt/runs/my-run/step-40/"}});
  EXPECT_EQ(e.resume->location.bucket, "bkt");
  EXPECT_EQ(e.resume->location.prefix, "runs/my-run/step-40");
  EXPECT_EQ(*e.resume->step, 40);
  auto d = errors({{"SEXPGPU_RESUME", "s3://bkt/runs/my-run"}});
  EXPECT_EQ(d[0].message,
            "SEXPGPU_RESUME: expected a directory, s3://bucket/prefix/step-<n>, or latest, found "
            "\"s3://bkt/runs/my-run\"");
}

TEST(Environment, S3EachValueResolvesOnItsOwn) {
  Environment e = parse({{"SEXPGPU_DATA_AWS_ACCESS_KEY_ID", "data-id"},
                         {"SEXPGPU_AWS_ACCESS_KEY_ID", "shared-id"},
                         {"AWS_ACCESS_KEY_ID", "plain-id"},
                         {"SEXPGPU_AWS_SECRET_ACCESS_KEY", "shared-secret"},
                         {"AWS_SECRET_ACCESS_KEY", "plain-secret"},
                         {"SEXPGPU_CHECKPOINT_AWS_ENDPOINT_URL", "http://minio:9000"},
                         {"AWS_ENDPOINT_URL", "https://s3.amazonaws.com"},
                         {"AWS_REGION", "us-east-1"},
                         {"SEXPGPU_DATA_AWS_SESSION_TOKEN", "tok-9f8e"}});
  const auto& d = e.s3_data;
  EXPECT_EQ(d.access_key_id.reveal(), "data-id");
  EXPECT_EQ(d.access_key_id.variable(), "SEXPGPU_DATA_AWS_ACCESS_KEY_ID");
  EXPECT_EQ(d.secret_access_key.reveal(), "shared-secret");
  EXPECT_EQ(d.secret_access_key.variable(), "SEXPGPU_AWS_SECRET_ACCESS_KEY");
  EXPECT_EQ(d.endpoint_url.value, "https://s3.amazonaws.com");
  EXPECT_EQ(d.endpoint_url.variable, "AWS_ENDPOINT_URL");
  EXPECT_EQ(d.region.variable, "AWS_REGION");
  EXPECT_EQ(d.session_token.variable(), "SEXPGPU_DATA_AWS_SESSION_TOKEN");
  EXPECT_TRUE(d.complete());
  const auto& c = e.s3_checkpoint;
  EXPECT_EQ(c.access_key_id.reveal(), "shared-id");
  EXPECT_EQ(c.endpoint_url.value, "http://minio:9000");
  EXPECT_EQ(c.endpoint_url.variable, "SEXPGPU_CHECKPOINT_AWS_ENDPOINT_URL");
  EXPECT_FALSE(c.session_token.set());
  EXPECT_TRUE(c.complete());
  std::string r = d.redacted() + c.redacted();
  for (const char* secret : {"data-id", "shared-id", "shared-secret", "plain-secret", "tok-9f8e"})
    EXPECT_EQ(r.find(secret), std::string::npos) << secret;
  EXPECT_NE(r.find("from SEXPGPU_DATA_AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_EQ(::testing::PrintToString(d.secret_access_key), "<secret from SEXPGPU_AWS_SECRET_ACCESS_KEY>");
}

// An endpoint's user:password@ is a credential too: never in redacted(), nor in
// the E-ENV-001 that refuses a URL that is not http(s).
TEST(Environment, S3EndpointUserinfoNeverShown) {
  Environment e = parse({{"AWS_ENDPOINT_URL", "http://user:hunter2@127.0.0.1:1/"},
                         {"AWS_REGION", "r"},
                         {"AWS_ACCESS_KEY_ID", "id"},
                         {"AWS_SECRET_ACCESS_KEY", "key"}});
  std::string r = e.s3_data.redacted();
  EXPECT_EQ(r.find("hunter2"), std::string::npos) << r;
  EXPECT_NE(r.find("endpoint http://***@127.0.0.1:1/ from AWS_ENDPOINT_URL"), std::string::npos) << r;
  Environment bad = parse({{"AWS_ENDPOINT_URL", "ftp://user:secret@host/"},
                           {"AWS_REGION", "r"},
                           {"AWS_ACCESS_KEY_ID", "id"},
                           {"AWS_SECRET_ACCESS_KEY", "key"}});
  try {
    require_s3(bad.s3_data, "the source s3://b/train.txt");
    FAIL();
  } catch (const UserError& err) {
    EXPECT_EQ(err.code(), Code::ENV_001);
    EXPECT_EQ(std::string(err.what()).find("secret"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("ftp://***@host/"), std::string::npos) << err.what();
  }
}

TEST(Environment, S3MissingListsVariablesToSet) {
  Environment e = parse({{"AWS_ACCESS_KEY_ID", "id"}, {"AWS_SECRET_ACCESS_KEY", "very-secret"}});
  EXPECT_EQ(
      e.s3_checkpoint.missing(),
      (std::vector<std::string>{"SEXPGPU_CHECKPOINT_AWS_ENDPOINT_URL, SEXPGPU_AWS_ENDPOINT_URL or AWS_ENDPOINT_URL",
                                "SEXPGPU_CHECKPOINT_AWS_REGION, SEXPGPU_AWS_REGION or AWS_REGION"}));
  try {
    require_s3(e.s3_data, "the source s3://b/train.txt");
    FAIL();
  } catch (const UserError& err) {
    ASSERT_EQ(err.diagnostics().size(), 1u);
    const auto& d = err.diagnostics()[0];
    EXPECT_EQ(d.code, Code::ENV_002);
    EXPECT_EQ(d.message,
              "the source s3://b/train.txt needs the data role's S3 ENDPOINT_URL and REGION, which are not set");
    EXPECT_EQ(d.notes[1], "REGION: set SEXPGPU_DATA_AWS_REGION, SEXPGPU_AWS_REGION or AWS_REGION");
    EXPECT_EQ(render(d).find("very-secret"), std::string::npos);
  }
}

TEST(Environment, ManyErrorsReportedTogether) {
  auto d = errors({{"SEXPGPU_DEVICE", "tpu"},
                   {"SEXPGPU_EVAL_LIMIT", "abc"},
                   {"SEXPGPU_MEMORY", "lots"},
                   {"SYVAIN_METRICS_API_KEY", "sk-live-XYZ"},
                   {"AWS_SECRET_ACCESS_KEY", "hunter2"}});
  ASSERT_EQ(d.size(), 3u);
  std::string all = rendered({{"SEXPGPU_DEVICE", "tpu"},
                              {"SEXPGPU_EVAL_LIMIT", "abc"},
                              {"SEXPGPU_MEMORY", "lots"},
                              {"SYVAIN_METRICS_API_KEY", "sk-live-XYZ"},
                              {"AWS_SECRET_ACCESS_KEY", "hunter2"}});
  for (const char* name : {"SEXPGPU_DEVICE", "SEXPGPU_EVAL_LIMIT", "SEXPGPU_MEMORY"})
    EXPECT_NE(all.find(name), std::string::npos) << name;
  EXPECT_EQ(all.find("sk-live-XYZ"), std::string::npos);
  EXPECT_EQ(all.find("hunter2"), std::string::npos);
}

TEST(Environment, RenderedFormat) {
  EXPECT_EQ(rendered({{"SEXPGPU_DEVICE", "tpu"}}),
            "error[E-ENV-001]: SEXPGPU_DEVICE: expected cpu or cuda, found \"tpu\"\n"
            "  = help: did you mean `cpu`?\n");
}

TEST(Environment, FlagsWinAndValidateAlike) {
  Environment e = parse({{"SEXPGPU_DEVICE", "cuda"}, {"SEXPGPU_METRICS", "stdout"}});
  EXPECT_TRUE(apply_flag(e, "--device", "cpu"));
  EXPECT_EQ(e.device, Device::cpu);
  EXPECT_EQ(e.device_source, "--device");
  EXPECT_TRUE(apply_flag(e, "--metrics", "jsonl:m.jsonl"));
  EXPECT_EQ(e.metrics->path, "m.jsonl");
  EXPECT_TRUE(apply_flag(e, "--status", "s.json"));
  EXPECT_TRUE(apply_flag(e, "--checkpoint-dir", "s3://bkt/ck"));
  EXPECT_EQ(e.checkpoint_dir_source, "--checkpoint-dir");
  EXPECT_TRUE(apply_flag(e, "--resume", "latest"));
  EXPECT_TRUE(apply_flag(e, "--diagnostics", "logits/*"));
  EXPECT_FALSE(apply_flag(e, "--steps", "3"));
  try {
    apply_flag(e, "--device", "tpu");
    FAIL();
  } catch (const UserError& err) {
    EXPECT_EQ(err.code(), Code::CLI_002);
    EXPECT_EQ(err.diagnostics()[0].message, "--device: expected cpu or cuda, found \"tpu\"");
  }
  EXPECT_THROW(apply_flag(e, "--resume", ""), UserError);  // a flag's empty value is not "unset"
  EXPECT_THROW(parse_device("tpu", "SEXPGPU_DEVICE"), UserError);
}

TEST(Environment, Requirements) {
  auto check = [](const Environment& e) {
    try {
      check_requirements(e);
    } catch (const UserError& err) {
      return err.diagnostics();
    }
    return std::vector<Diagnostic>{};
  };
  EXPECT_TRUE(check(parse({})).empty());
  auto d = check(parse({{"SEXPGPU_METRICS", "syvain"}}));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].message,
            "the syvain metrics target (SEXPGPU_METRICS=syvain) needs SYVAIN_METRICS_API_KEY, which is not set");
  EXPECT_TRUE(check(parse({{"SEXPGPU_METRICS", "syvain:f"}, {"SYVAIN_METRICS_API_KEY", "k"}})).empty());

  Environment e = parse({{"SEXPGPU_RESUME", "latest"}, {"AWS_ACCESS_KEY_ID", "i"}});
  d = check(e);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "SEXPGPU_RESUME=latest needs a checkpoint location to look in");
  apply_flag(e, "--checkpoint-dir", "s3://bkt/ck");
  d = check(e);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message.rfind("the checkpoint location --checkpoint-dir s3://bkt/ck needs the checkpoint role's "
                               "S3 SECRET_ACCESS_KEY, ENDPOINT_URL and REGION",
                               0),
            0u);

  e = parse({{"SEXPGPU_RESUME", "s3://bkt/ck/run/step-3"},
             {"AWS_ACCESS_KEY_ID", "i"},
             {"AWS_SECRET_ACCESS_KEY", "s"},
             {"AWS_REGION", "r"},
             {"SEXPGPU_AWS_ENDPOINT_URL", "minio:9000"}});
  d = check(e);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, Code::ENV_001);
  EXPECT_EQ(d[0].message, "SEXPGPU_AWS_ENDPOINT_URL: expected an http:// or https:// URL, found \"minio:9000\"");
}

// What a run cannot honour is refused (E-ENV-003), never ignored.
TEST(Environment, SettingsThatDoNotApplyAreRefused) {
  auto refused = [](const Environment& e) {
    std::vector<std::string> out;
    try {
      check_requirements(e);
    } catch (const UserError& err) {
      for (const auto& d : err.diagnostics()) {
        EXPECT_EQ(d.code, Code::ENV_003) << d.message;
        out.push_back(d.message);
      }
    }
    return out;
  };
  auto d = refused(parse({{"SEXPGPU_DEVICES", "0,1"}, {"SEXPGPU_CUDA_EMULATE", "2"}}));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "SEXPGPU_DEVICES=0,1 names CUDA devices, but this run trains on the default device, cpu");
  EXPECT_EQ(d[1], "SEXPGPU_CUDA_EMULATE=2 emulates CUDA devices, but this run trains on the default device, cpu");
  Environment e = parse({{"SEXPGPU_DEVICES", "1"}, {"SEXPGPU_CUDA_EMULATE", "0"}});
  apply_flag(e, "--device", "cpu");
  d = refused(e);
  ASSERT_EQ(d.size(), 1u);  // SEXPGPU_CUDA_EMULATE=0 emulates nothing
  EXPECT_EQ(d[0], "SEXPGPU_DEVICES=1 names CUDA devices, but this run trains on --device cpu");
  apply_flag(e, "--device", "cuda");
  EXPECT_TRUE(refused(e).empty());
  // The CUDA launches of the lowering report: a run on the cpu has none (`explain` shows them anywhere).
  e = parse({{"SEXPGPU_EXPLAIN", "kernels"}});
  d = refused(e);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0],
            "SEXPGPU_EXPLAIN=kernels lists the CUDA launches in the lowering report, but this run trains on the "
            "default device, cpu, which has none");
  apply_flag(e, "--device", "cuda");
  EXPECT_TRUE(refused(e).empty());
  // AMX's tiles are the CPU's (whether this CPU has them, `run` checks: commands.cpp's use_cpu_bf16).
  e = parse({{"SEXPGPU_CPU_BF16", "amx"}, {"SEXPGPU_DEVICE", "cuda"}});
  d = refused(e);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0],
            "SEXPGPU_CPU_BF16=amx runs the CPU's bf16 products on AMX's tiles, but this run trains on "
            "SEXPGPU_DEVICE=cuda");
  apply_flag(e, "--device", "cpu");
  EXPECT_TRUE(refused(e).empty());
  EXPECT_TRUE(refused(parse({{"SEXPGPU_CPU_BF16", "exact"}, {"SEXPGPU_DEVICE", "cuda"}})).empty());

  d = refused(parse({{"SEXPGPU_RENDEZVOUS", "[::1]:29500"},
                     {"SEXPGPU_NODE_GRADIENTS", "bf16"},
                     {"SEXPGPU_NODE_ADDRESS", "10.0.0.2"}}));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0],
            "SEXPGPU_RENDEZVOUS=[::1]:29500 is where the nodes meet, but SEXPGPU_NODES is not set: this run is one "
            "node");
  EXPECT_EQ(d[1],
            "SEXPGPU_NODE_GRADIENTS=bf16 sets the gradients that cross nodes, but SEXPGPU_NODES is not set: "
            "this run is one node");
  EXPECT_EQ(d[2],
            "SEXPGPU_NODE_ADDRESS=10.0.0.2 is the address other nodes reach this one at, but SEXPGPU_NODES "
            "is not set: this run is one node");
  d = refused(parse({{"SEXPGPU_NODES", "1"}, {"SEXPGPU_NODE_GRADIENTS", "f32"}}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("but SEXPGPU_NODES is 1"), std::string::npos) << d[0];
  EXPECT_TRUE(refused(parse({{"SEXPGPU_NODES", "2"},
                             {"SEXPGPU_RENDEZVOUS", "127.0.0.1:29500"},
                             {"SEXPGPU_NODE_GRADIENTS", "bf16"},
                             {"SEXPGPU_NODE_ADDRESS", "127.0.0.1"}}))
                  .empty());
}

}  // namespace
}  // namespace sx
