// mig-mode, nvlink and fabric-manager: what each says for a MIG layout, a
// pending mode change, a link down, and a fabric that is not set up.
#include <gtest/gtest.h>

#include "checklist_fixture.h"

namespace gd::test {
namespace {

class DatacenterChecks : public HealthyGpusTest {
 protected:
  std::vector<CheckItem> run(const std::string& id) {
    ChecklistTree tree("healthy");
    CheckContext ctx(h, s, tree.proc(), tree.sys());
    return run_check(ctx, id);
  }
};

TEST_F(DatacenterChecks, MigLayoutPassesAndAPendingChangeWarns) {
  h.gpus[0].mig_enabled = h.gpus[0].mig_enabled_pending = true;
  s.gpus[0].mig_instances.emplace();
  for (const char* p : {"3g.40gb", "2g.20gb", "2g.20gb"}) {
    MigInstance m;
    m.profile = p;
    s.gpus[0].mig_instances->push_back(m);
  }
  h.gpus[1].mig_enabled_pending = true;
  auto items = run("mig-mode");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kPass);
  EXPECT_NE(items[0].value.find("on: 3g.40gb + 2g.20gb + 2g.20gb"),
            std::string::npos)
      << items[0].value;
  EXPECT_EQ(items[1].status, CheckStatus::kWarn);
  EXPECT_NE(items[1].value.find("off, on pending"), std::string::npos);
  EXPECT_NE(items[1].detail.find("nvidia-smi -r -i 1"), std::string::npos);
}

TEST_F(DatacenterChecks, MigGpuWithoutInstancesWarnsAndNoSupportSkips) {
  h.gpus[0].mig_enabled = h.gpus[0].mig_enabled_pending = true;
  s.gpus[0].mig_instances = std::vector<MigInstance>{};
  h.gpus[1].mig_enabled.reset();
  auto items = run("mig-mode");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[1].status, CheckStatus::kSkip);
}

TEST_F(DatacenterChecks, ALinkDownFailsAndNoNvlinkSkips) {
  (*s.gpus[0].nvlinks)[5].active = false;
  s.gpus[1].nvlinks.reset();
  auto items = run("nvlink");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_EQ(items[0].value, "GPU 0: 11 of 12 links up, down: 5");
  EXPECT_EQ(items[1].status, CheckStatus::kSkip);
}

TEST_F(DatacenterChecks, FabricStates) {
  s.gpus[0].fabric_state = kFabricInProgress;
  s.gpus[1].fabric_state = kFabricFailed;
  auto items = run("fabric-manager");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].status, CheckStatus::kWarn);
  EXPECT_EQ(items[1].status, CheckStatus::kFail);
  EXPECT_NE(items[1].detail.find("nvidia-fabricmanager"), std::string::npos);
  s.gpus[0].fabric_state.clear();
  s.gpus[1].fabric_state = kFabricNotSupported;
  items = run("fabric-manager");
  for (const auto& i : items) EXPECT_EQ(i.status, CheckStatus::kSkip);
}

}  // namespace
}  // namespace gd::test
