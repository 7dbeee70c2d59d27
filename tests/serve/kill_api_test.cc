// POST /api/v1/kill on a real HttpServer: off by default (403 saying how to
// turn it on), the head checks that keep web pages out (method, JSON
// content type, the custom header, a bounded body), bad bodies, each
// refusal of the kill plan (PID 1, kernel threads, serve itself and its
// ancestors, processes unrelated to a GPU), and real children: planned,
// ended after a kill with the plan's id, left alone when the id is stale,
// one kill at a time, basic auth, and a stop that does not wait out a
// session.
#include "serve/kill_api.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "collect/sampler.h"
#include "procmgmt/waiting_child.h"
#include "raw_http.h"
#include "serve/http_limits.h"
#include "serve/http_server.h"

namespace gd {
namespace {

using nlohmann::json;
using test::RawReply;

// bcrypt of "s3cret pass" (cost 4, so the test is quick).
constexpr const char* kHash =
    "$2b$04$abcdefghijklmnopqrstuuoBpIrM0OnplXjsOI8DWYJTHUhJDuUv.";
// base64 of "ops:s3cret pass".
constexpr const char* kGoodAuth =
    "Authorization: Basic b3BzOnMzY3JldCBwYXNz\r\n";

const std::string kJson = "Content-Type: application/json\r\n";
const std::string kMark = "X-Gpudoctor-Kill: 1\r\n";

RawReply post(int port, const std::string& body,
              const std::string& headers = kJson + kMark,
              const std::string& path = "/api/v1/kill") {
  int fd = test::connect_local(port);
  if (fd < 0) return {};
  test::send_all(fd, "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                         headers +
                         "Content-Length: " + std::to_string(body.size()) +
                         "\r\nConnection: close\r\n\r\n" + body);
  RawReply r = test::read_reply(fd, 30000);
  close(fd);
  return r;
}

json body_of(const RawReply& r) { return json::parse(r.body, nullptr, false); }

std::string error_of(const RawReply& r) {
  json j = body_of(r);
  return j.is_object() && j.contains("error") ? j["error"].get<std::string>()
                                              : "(no error: " + r.body + ")";
}

// What NVML lists: `listed` pids on GPU 0, 4 GiB each.
std::shared_ptr<const Sample> sample_listing(std::vector<uint32_t> listed) {
  auto s = std::make_shared<Sample>();
  s->t = unix_now();
  GpuSample g;
  g.index = 0;
  g.mem_used_bytes = (4ull << 30) * listed.size() + (300ull << 20);
  g.processes.emplace();
  for (uint32_t pid : listed)
    g.processes->push_back({pid, 4ull << 30, "compute"});
  s->gpus.push_back(g);
  return s;
}

class KillServer : public ::testing::Test {
 protected:
  void start(std::optional<KillApiConfig> kill, bool auth = false) {
    server = std::make_unique<HttpServer>(box, nullptr);
    if (kill) server->enable_kill(std::move(*kill));
    if (auth) {
      WebConfig web;
      web.basic_auth_users = {{"ops", kHash}};
      server->use_web_config(web);
    }
    server->bind("127.0.0.1", 0);
    server->start();
    port = server->port();
  }
  // Kill on, NVML listing what `listed` says now.
  KillApiConfig config(std::string proc_root = "/proc") {
    KillApiConfig c;
    c.enabled = true;
    c.proc_root = std::move(proc_root);
    c.fresh_sample = [this] {
      std::lock_guard lock(mu);
      return sample_listing(listed);
    };
    return c;
  }
  void list(std::vector<uint32_t> pids) {
    std::lock_guard lock(mu);
    listed = std::move(pids);
  }
  void TearDown() override {
    if (server) server->stop();
    for (pid_t g : groups) kill(-g, SIGKILL);
    for (pid_t c : children) {
      kill(c, SIGKILL);
      waitpid(c, nullptr, 0);
    }
  }
  pid_t child(bool ignore_term = false) {
    pid_t c = gd::test::spawn_waiting_child(ignore_term);
    children.push_back(c);
    return c;
  }

  SnapshotBox box{std::make_shared<Snapshot>()};
  std::unique_ptr<HttpServer> server;
  int port = 0;
  std::mutex mu;
  std::vector<uint32_t> listed;
  std::vector<pid_t> children;
  std::vector<pid_t> groups;  // process groups to end too
};

TEST(KillHead, EachRefusalBeforeTheBodyIsRead) {
  KillHead ok{"POST", "application/json", "1", "20", false};
  EXPECT_FALSE(kill_head_refusal(ok, true));
  auto with = [&](auto change) {
    KillHead h = ok;
    change(h);
    auto r = kill_head_refusal(h, true);
    return r ? r->status : 0;
  };
  EXPECT_EQ(kill_head_refusal(ok, false)->status, 403);
  EXPECT_NE(kill_head_refusal(ok, false)->body.find("--allow-remote-kill"),
            std::string::npos);
  EXPECT_EQ(with([](KillHead& h) { h.method = "GET"; }), 405);
  EXPECT_EQ(with([](KillHead& h) { h.method = "OPTIONS"; }), 405);
  EXPECT_EQ(with([](KillHead& h) { h.content_type.reset(); }), 415);
  EXPECT_EQ(with([](KillHead& h) { h.content_type = "text/plain"; }), 415);
  EXPECT_EQ(with([](KillHead& h) {
              h.content_type = "application/x-www-form-urlencoded";
            }),
            415);
  EXPECT_EQ(with([](KillHead& h) {
              h.content_type = "Application/JSON; charset=utf-8";
            }),
            0);
  EXPECT_EQ(with([](KillHead& h) { h.kill_header.reset(); }), 403);
  EXPECT_EQ(with([](KillHead& h) { h.kill_header = "0"; }), 403);
  EXPECT_EQ(with([](KillHead& h) { h.transfer_encoding = true; }), 411);
  EXPECT_EQ(with([](KillHead& h) { h.content_length.reset(); }), 411);
  EXPECT_EQ(with([](KillHead& h) { h.content_length = "4097"; }), 413);
  EXPECT_EQ(with([](KillHead& h) { h.content_length = "-1"; }), 413);
  EXPECT_EQ(with([](KillHead& h) { h.content_length = "4096"; }), 0);
}

TEST_F(KillServer, OffByDefaultSaysHowToTurnItOn) {
  start(std::nullopt);
  RawReply r = post(port, R"({"pids":[1],"dry_run":true})");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(error_of(r).find("start it with --allow-remote-kill"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(test::request(port, "/api/v1/kill").status, 403);
}

TEST_F(KillServer, StatusSaysWhetherRemoteKillIsOn) {
  auto snap = std::make_shared<Snapshot>();
  snap->header = std::make_shared<const TraceHeader>();
  box.set(snap);
  start(std::nullopt);
  auto off = body_of(test::request(port, "/api/v1/status"));
  EXPECT_EQ(off["collect"]["remote_kill"], false);
  server->stop();
  start(config());
  auto on = body_of(test::request(port, "/api/v1/status"));
  EXPECT_EQ(on["collect"]["remote_kill"], true);
}

TEST_F(KillServer, WebPagesCannotSendIt) {
  start(config());
  const std::string body = R"({"pids":[1],"dry_run":true})";
  // A form posts text/plain or urlencoded, without custom headers.
  EXPECT_EQ(post(port, body, "Content-Type: text/plain\r\n" + kMark).status,
            415);
  EXPECT_EQ(post(port, body, kMark).status, 415);
  RawReply no_mark = post(port, body, kJson);
  EXPECT_EQ(no_mark.status, 403);
  EXPECT_NE(error_of(no_mark).find("X-Gpudoctor-Kill: 1"), std::string::npos);
  EXPECT_EQ(
      test::request(port, "/api/v1/kill", "Host: 127.0.0.1\r\n" + kJson + kMark)
          .status,
      405);
  EXPECT_EQ(
      test::request(port, "/api/v1/kill", "Host: 127.0.0.1\r\n", "OPTIONS")
          .status,
      405);
  // A DNS-rebinding page: the Host check holds here too.
  int fd = test::connect_local(port);
  test::send_all(fd, "POST /api/v1/kill HTTP/1.1\r\nHost: evil.example\r\n" +
                         kJson + kMark +
                         "Content-Length: " + std::to_string(body.size()) +
                         "\r\nConnection: close\r\n\r\n" + body);
  RawReply rebound = test::read_reply(fd);
  close(fd);
  EXPECT_EQ(rebound.status, 403);
  EXPECT_NE(rebound.body.find("Host header not allowed"), std::string::npos);
}

TEST_F(KillServer, BodiesAreBoundedAndCheckedAndOtherPathsKeepTheirLimits) {
  start(config());
  const std::string big(http_limits::kMaxKillBodyBytes + 1, ' ');
  RawReply r = post(port, big);
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(error_of(r).find("larger than 4096 bytes"), std::string::npos);
  // At the bound: read, then refused for what it says.
  std::string at_bound = R"({"pids":[1]})";
  at_bound.resize(http_limits::kMaxKillBodyBytes, ' ');
  RawReply at = post(port, at_bound);
  EXPECT_EQ(at.status, 200) << at.body;
  EXPECT_EQ(body_of(at)["exit_code"], 3);  // PID 1: refused
  RawReply bad = post(port, R"({"pids":[1],"dry_run":tru})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(error_of(bad), "kill request: the body is not JSON");
  EXPECT_EQ(post(port, R"({"pid":1})").status, 400);
  EXPECT_NE(error_of(post(port, "{}")).find("name the processes"),
            std::string::npos);
  // Chunked bodies are refused.
  int fd = test::connect_local(port);
  test::send_all(fd, "POST /api/v1/kill HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                         kJson + kMark +
                         "Transfer-Encoding: chunked\r\nConnection: "
                         "close\r\n\r\n5\r\n{}   \r\n0\r\n\r\n");
  EXPECT_EQ(test::read_reply(fd).status, 411);
  close(fd);
  // Every other path: no body, no POST, as before.
  EXPECT_EQ(post(port, "{}", kJson + kMark, "/metrics").status, 413);
  EXPECT_EQ(
      test::request(port, "/metrics", "Host: 127.0.0.1\r\n", "POST").status,
      405);
}

TEST_F(KillServer, EachRefusalOfThePlan) {
  // The fixture tree of tests/procmgmt: 1 init, 50 a kernel thread, 6000
  // "gpudoctor" (serve itself here) under its shell 900, 7000 vim, 1001 a
  // GPU process.
  KillApiConfig c = config(std::string(GD_PROCMGMT_FIXTURES) + "/proc");
  c.self_pid = 6000;
  start(c);
  list({1001, 1});
  auto reason = [&](uint32_t pid) {
    RawReply r =
        post(port, R"({"dry_run":true,"pids":[)" + std::to_string(pid) + "]}");
    EXPECT_EQ(r.status, 200) << r.body;
    json j = body_of(r);
    EXPECT_EQ(j["exit_code"], 3) << r.body;
    EXPECT_EQ(j["message"], "Refused, nothing was sent.");
    EXPECT_TRUE(j["plan"]["targets"].empty());
    return j["plan"]["refusals"].at(0)["reason"].get<std::string>();
  };
  EXPECT_EQ(reason(1), "PID 1 (init) is never signalled");
  EXPECT_EQ(reason(50), "a kernel thread is never signalled");
  EXPECT_EQ(reason(6000), "that is gpudoctor itself");
  EXPECT_EQ(reason(900),
            "an ancestor of gpudoctor (the shell or session that runs it)");
  EXPECT_EQ(reason(7000),
            "not a GPU process nor a descendant of one (add --any to allow)");
  // A GPU process is planned, with its memory and the plan's id.
  RawReply ok = post(port, R"({"dry_run":true,"pids":[1001]})");
  json j = body_of(ok);
  EXPECT_EQ(j["exit_code"], 0) << ok.body;
  EXPECT_EQ(j["message"], "Dry run: nothing was sent.");
  ASSERT_EQ(j["plan"]["targets"].size(), 1u);
  EXPECT_EQ(j["plan"]["targets"][0]["pid"], 1001);
  EXPECT_EQ(j["plan"]["targets"][0]["gpu_memory_bytes"], 4ull << 30);
  EXPECT_EQ(j["plan"]["id"].get<std::string>().size(), 16u);
  EXPECT_TRUE(j["outcome"].is_null());
  // A pid that does not exist: as `kill`, exit 1.
  json gone = body_of(post(port, R"({"dry_run":true,"pids":[9999]})"));
  EXPECT_EQ(gone["exit_code"], 1);
  EXPECT_EQ(gone["plan"]["not_found"], json::array({9999}));
}

TEST_F(KillServer, CommandLinesLeaveRedacted) {
  pid_t sh = fork();
  if (sh == 0) {
    // A group of its own (its sleep is ended with it) and no inherited
    // output pipe (which would keep the test runner waiting on it).
    setpgid(0, 0);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl("/bin/sh", "sh", "-c", "sleep 60; :", "sh", "--api-key=hunter2",
          nullptr);
    _exit(127);
  }
  setpgid(sh, sh);
  children.push_back(sh);
  groups.push_back(sh);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  start(config());
  list({static_cast<uint32_t>(sh)});
  RawReply r =
      post(port, R"({"dry_run":true,"pids":[)" + std::to_string(sh) + "]}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("hunter2"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("--api-key=<redacted>"), std::string::npos) << r.body;
}

TEST_F(KillServer, EndsARealChildWithThePlansIdAndChecksTheMemory) {
  pid_t c = child();
  std::atomic<bool> reaped{false};
  std::thread reaper([&] {
    waitpid(c, nullptr, 0);
    reaped = true;
    list({});  // the driver frees the memory once the process has ended
  });
  start(config());
  list({static_cast<uint32_t>(c)});
  const std::string pid = std::to_string(c);
  json plan = body_of(post(port, R"({"dry_run":true,"pids":[)" + pid + "]}"));
  const std::string id = plan["plan"]["id"];
  // A stale id (another plan) sends nothing.
  RawReply stale =
      post(port, R"({"pids":[)" + pid + R"(],"plan_id":"0000000000000000"})");
  EXPECT_EQ(stale.status, 409);
  EXPECT_NE(error_of(stale).find("the plan changed"), std::string::npos);
  EXPECT_EQ(kill(c, 0), 0) << "a stale plan sent a signal";
  RawReply r = post(
      port, R"({"pids":[)" + pid + R"(],"timeout":3,"plan_id":")" + id + "\"}");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = body_of(r);
  EXPECT_EQ(j["exit_code"], 0) << r.body;
  EXPECT_EQ(j["message"], "GPU memory released.");
  EXPECT_EQ(j["outcome"]["result"], "released");
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["pid"], c);
  EXPECT_EQ(j["steps"][0]["signal"], "SIGTERM");
  EXPECT_EQ(j["steps"][0]["error"], "");
  ASSERT_EQ(j["outcome"]["memory"].size(), 1u);
  EXPECT_EQ(j["outcome"]["memory"][0]["before_bytes"],
            (4ull << 30) + (300ull << 20));
  EXPECT_EQ(j["outcome"]["memory"][0]["after_bytes"], 300ull << 20);
  reaper.join();
  EXPECT_TRUE(reaped);
  children.clear();
}

TEST_F(KillServer, OneKillAtATime) {
  pid_t stubborn = child(/*ignore_term=*/true);
  start(config());
  list({static_cast<uint32_t>(stubborn)});
  const std::string body =
      R"({"pids":[)" + std::to_string(stubborn) + R"(],"timeout":2})";
  RawReply first;
  std::thread t([&] { first = post(port, body); });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  RawReply second = post(port, body);
  t.join();
  EXPECT_EQ(second.status, 409);
  EXPECT_NE(error_of(second).find("another remote kill is under way"),
            std::string::npos);
  ASSERT_EQ(first.status, 200) << first.body;
  json j = body_of(first);
  EXPECT_EQ(j["exit_code"], 5);  // still alive: it ignores TERM, no force
  EXPECT_EQ(j["outcome"]["result"], "still_alive");
  EXPECT_EQ(kill(stubborn, 0), 0);
}

TEST_F(KillServer, NeedsThePasswordWhenAuthIsOn) {
  start(config(), /*auth=*/true);
  const std::string body = R"({"pids":[1],"dry_run":true})";
  EXPECT_EQ(post(port, body).status, 401);
  EXPECT_EQ(post(port, body,
                 kJson + kMark +
                     "Authorization: Basic b3BzOndyb25n\r\n")  // ops:wrong
                .status,
            401);
  RawReply ok = post(port, body, kJson + kMark + kGoodAuth);
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(body_of(ok)["exit_code"], 3);
}

// Reads from `fd` until `raw` contains `text` or `timeout_ms` passes;
// the seconds since `t0` when it did, or -1.
double seconds_until(int fd, std::string& raw, const std::string& text,
                     std::chrono::steady_clock::time_point t0,
                     int timeout_ms = 30000) {
  char buf[4096];
  const auto deadline = t0 + std::chrono::milliseconds(timeout_ms);
  while (raw.find(text) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return -1;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    raw.append(buf, static_cast<size_t>(n));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

// "stream": true: each step as it happens (application/x-ndjson), the
// whole reply as the last line. A process that ignores TERM: the TERM line
// comes at once, the KILL and the outcome after the 2 s wait.
TEST_F(KillServer, StreamedReplySendsEachStepAsItHappens) {
  pid_t stubborn = child(/*ignore_term=*/true);
  std::thread reaper([&] {
    waitpid(stubborn, nullptr, 0);
    list({});
  });
  start(config());
  list({static_cast<uint32_t>(stubborn)});
  const std::string pid = std::to_string(stubborn);
  const std::string body =
      R"({"pids":[)" + pid + R"(],"timeout":2,"force":true,"stream":true})";
  int fd = test::connect_local(port);
  ASSERT_GE(fd, 0);
  const auto t0 = std::chrono::steady_clock::now();
  test::send_all(fd, "POST /api/v1/kill HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                         kJson + kMark +
                         "Content-Length: " + std::to_string(body.size()) +
                         "\r\nConnection: close\r\n\r\n" + body);
  std::string raw;
  const double term = seconds_until(
      fd, raw,
      R"({"step":{"error":"","pid":)" + pid + R"(,"signal":"SIGTERM"}})", t0);
  const double killed = seconds_until(
      fd, raw,
      R"({"step":{"error":"","pid":)" + pid + R"(,"signal":"SIGKILL"}})", t0);
  const double last = seconds_until(fd, raw, R"({"reply":{)", t0);
  seconds_until(fd, raw, "\r\n0\r\n\r\n", t0);  // the last chunk
  close(fd);
  reaper.join();
  children.clear();
  ASSERT_EQ(raw.rfind("HTTP/1.1 200", 0), 0u) << raw;
  EXPECT_NE(raw.find("application/x-ndjson"), std::string::npos) << raw;
  ASSERT_GE(term, 0) << raw;
  ASSERT_GE(killed, 0) << raw;
  ASSERT_GE(last, 0) << raw;
  EXPECT_LT(term + 1.5, killed) << "TERM was not sent before the wait";
  EXPECT_NE(raw.find(R"({"step":{"alive":1,"escalation":true,"timeout_s":2)"),
            std::string::npos)
      << raw;
  // The last line is the whole reply, as a plain request gets it.
  const std::string reply_line = raw.substr(
      raw.find(R"({"reply":{)"),
      raw.find('\n', raw.find(R"({"reply":{)")) - raw.find(R"({"reply":{)"));
  json j = json::parse(reply_line, nullptr, false);
  ASSERT_TRUE(j.is_object()) << reply_line;
  EXPECT_EQ(j["reply"]["outcome"]["result"], "released") << reply_line;
  EXPECT_EQ(j["reply"]["steps"].size(), 3u) << reply_line;
}

// A refused plan is answered whole, with its status, streamed or not.
TEST_F(KillServer, StreamedRequestThatIsRefusedGetsAPlainReply) {
  start(config());
  RawReply r = post(port, R"({"pids":[1],"stream":true})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.head.find("application/json"), std::string::npos) << r.head;
  EXPECT_EQ(body_of(r)["exit_code"], 3) << r.body;
}

// --remote-kill-admins: a basic-auth user not listed may end only the
// processes of the Unix user of its name; one listed, any.
TEST_F(KillServer, NonAdminsMayEndOnlyTheirOwnUsersProcesses) {
  pid_t c = child();  // this test's Unix user's, not "ops"'s
  const std::string pid = std::to_string(c);
  KillApiConfig not_ops = config();
  not_ops.admins = std::vector<std::string>{"root-operator"};
  start(not_ops, /*auth=*/true);
  list({static_cast<uint32_t>(c)});
  const std::string auth = kJson + kMark + kGoodAuth;  // as "ops"
  RawReply r = post(port, R"({"pids":[)" + pid + R"(],"timeout":1})", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = body_of(r);
  EXPECT_TRUE(j["plan"]["targets"].empty()) << r.body;
  ASSERT_EQ(j["plan"]["notes"].size(), 1u) << r.body;
  EXPECT_NE(
      j["plan"]["notes"][0].get<std::string>().find("not ops: left alone"),
      std::string::npos)
      << r.body;
  EXPECT_EQ(kill(c, 0), 0) << "a non-admin ended another user's process";
  r = post(port, R"({"pids":[)" + pid + R"(],"user":"root","dry_run":true})",
           auth);
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(error_of(r).find("'ops' may end only the processes of the Unix "
                             "user 'ops'"),
            std::string::npos)
      << r.body;
  // Listed: the plan is the same as without the list.
  KillApiConfig ops = config();
  ops.admins = std::vector<std::string>{"ops"};
  start(ops, /*auth=*/true);
  r = post(port, R"({"pids":[)" + pid + R"(],"dry_run":true})", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  j = body_of(r);
  ASSERT_EQ(j["plan"]["targets"].size(), 1u) << r.body;
  EXPECT_EQ(j["plan"]["targets"][0]["pid"], c);
}

// A non-admin may name its own Unix user by uid too (as `kill --user 1000`
// takes it): that is the same user, not another's processes.
TEST_F(KillServer, NonAdminNamingItsOwnUidIsItself) {
  pid_t c = child();  // this test's Unix user's
  const std::string pid = std::to_string(c);
  const uint32_t uid = getuid();
  KillApiConfig cfg = config();
  cfg.admins = std::vector<std::string>{"root-operator"};
  // "ops" stands for this test's Unix user.
  cfg.user_name_of = [uid](uint32_t u) {
    return u == uid ? std::string("ops") : std::to_string(u);
  };
  start(cfg, /*auth=*/true);
  list({static_cast<uint32_t>(c)});
  const std::string auth = kJson + kMark + kGoodAuth;  // as "ops"
  RawReply r = post(port,
                    R"({"pids":[)" + pid + R"(],"user":")" +
                        std::to_string(uid) + R"(","dry_run":true})",
                    auth);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = body_of(r);
  ASSERT_EQ(j["plan"]["targets"].size(), 1u) << r.body;
  EXPECT_EQ(j["plan"]["targets"][0]["pid"], c);
  // Another uid is still another user's.
  r = post(port,
           R"({"pids":[)" + pid + R"(],"user":")" + std::to_string(uid + 1) +
               R"(","dry_run":true})",
           auth);
  EXPECT_EQ(r.status, 403) << r.body;
}

// Streamed or not, a session under way does not hold up serve's stop.
TEST_F(KillServer, StoppingServeDoesNotWaitOutASession) {
  for (const char* stream : {"false", "true"}) {
    SCOPED_TRACE(std::string("stream: ") + stream);
    pid_t stubborn = child(/*ignore_term=*/true);
    start(config());
    list({static_cast<uint32_t>(stubborn)});
    std::thread t([&] {
      post(port, R"({"pids":[)" + std::to_string(stubborn) +
                     R"(],"timeout":50,"force":true,"stream":)" + stream + "}");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    const auto t0 = std::chrono::steady_clock::now();
    server->stop();
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    t.join();
    EXPECT_LT(took, 5) << "stop waited for the session";
    EXPECT_EQ(kill(stubborn, 0), 0) << "no SIGKILL after the stop";
  }
}

}  // namespace
}  // namespace gd
