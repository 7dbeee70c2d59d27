// HttpServer with descriptors numbered past 1023: serve keeps /proc files
// open for every watched process, so its sockets get high numbers, and a
// server waiting on them with select() would write past its fd_set.
// Debian's libcpp-httplib is built to wait with poll(); this guards against
// a cpp-httplib built (or vendored header-only) the other way.
#include "serve/http_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vector>

namespace gd {
namespace {

TEST(HttpServer, AnswersOnSocketsNumberedPast1023) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < 1400)
    GTEST_SKIP() << "hard open-files limit " << lim.rlim_max << " < 1400";
  rlimit raised = lim;
  raised.rlim_cur = 1400;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &raised), 0);
  std::vector<int> filler;
  int fd;
  while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 && fd < 1100)
    filler.push_back(fd);
  ASSERT_GE(fd, 1100) << "could not fill the low descriptor numbers";
  filler.push_back(fd);

  auto snap = std::make_shared<Snapshot>();
  SnapshotBox box(snap);
  int status = 0;
  {
    HttpServer server(box, nullptr);
    server.bind("127.0.0.1", 0);
    server.start();
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(5, 0);
    for (int i = 0; i < 3; ++i) {
      auto res = client.Get("/healthz");
      ASSERT_TRUE(res) << "no answer: " << httplib::to_string(res.error());
      status = res->status;
    }
    EXPECT_TRUE(server.healthy());
    server.stop();
  }
  // No sample yet: unhealthy, but answered.
  EXPECT_EQ(status, 503);
  for (int f : filler) close(f);
  setrlimit(RLIMIT_NOFILE, &lim);
}

}  // namespace
}  // namespace gd
