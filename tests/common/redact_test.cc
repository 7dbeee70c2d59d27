#include "common/redact.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

TEST(Redact, OptionValuesNamedLikeSecrets) {
  EXPECT_EQ(redact_secrets("python serve.py --api-key=sk-123 --port 80"),
            "python serve.py --api-key=<redacted> --port 80");
  EXPECT_EQ(redact_secrets("app --api-key sk-123 --port 80"),
            "app --api-key <redacted> --port 80");
  EXPECT_EQ(redact_secrets("app --token=abc -secret=x --db-password hunter2"),
            "app --token=<redacted> -secret=<redacted> --db-password "
            "<redacted>");
  EXPECT_EQ(redact_secrets("app --HF_TOKEN=hf_x --passwd p --auth-header=h"),
            "app --HF_TOKEN=<redacted> --passwd <redacted> "
            "--auth-header=<redacted>");
}

TEST(Redact, FlagWithoutValueLeavesNextOptionAlone) {
  EXPECT_EQ(redact_secrets("app --use-auth --verbose"),
            "app --use-auth --verbose");
}

TEST(Redact, CredentialLikeEnvironmentPairs) {
  EXPECT_EQ(redact_secrets("env AWS_SECRET_ACCESS_KEY=abc/def python x.py"),
            "env AWS_SECRET_ACCESS_KEY=<redacted> python x.py");
  EXPECT_EQ(redact_secrets("GITHUB_TOKEN=ghp_1 PGPASSWORD=pw MODEL=llama run"),
            "GITHUB_TOKEN=<redacted> PGPASSWORD=<redacted> MODEL=llama run");
  EXPECT_EQ(redact_secrets("docker run --env=API_TOKEN=t1 img"),
            "docker run --env=API_TOKEN=<redacted> img");
}

TEST(Redact, UrlUserInfo) {
  EXPECT_EQ(redact_secrets("git clone https://alice:s3cret@git.example/x.git"),
            "git clone https://alice:<redacted>@git.example/x.git");
  EXPECT_EQ(redact_secrets("pip install git+https://ghp_abc@github.com/o/r"),
            "pip install git+https://<redacted>@github.com/o/r");
  EXPECT_EQ(redact_secrets("--db=postgres://u:p@db:5432/x"),
            "--db=postgres://u:<redacted>@db:5432/x");
  // An '@' in the path is no user info.
  EXPECT_EQ(redact_secrets("curl https://host/a@b"), "curl https://host/a@b");
}

TEST(Redact, BearerTokens) {
  EXPECT_EQ(redact_secrets("curl -H Authorization: Bearer eyJhbGc.x.y url"),
            "curl -H Authorization: Bearer <redacted> url");
}

TEST(Redact, OrdinaryCommandLinesAreUnchanged) {
  for (const char* s :
       {"python3 train.py --lr 0.1 --epochs=3 --data /d/x",
        "torchrun --nproc_per_node=8 train.py", "ssh -p 22 host", "", " a  b "})
    EXPECT_EQ(redact_secrets(s), s);
}

TEST(Redact, DeeplyNestedEqualsIsLinear) {
  std::string many(1 << 20, '=');
  EXPECT_EQ(redact_secrets(many).size(), many.size());
}

}  // namespace
}  // namespace gd
