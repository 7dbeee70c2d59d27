#include "serve/unusable_history.h"

#include <stdexcept>

namespace gd {
namespace {

class UnusableHistory : public History {
 public:
  explicit UnusableHistory(std::string why) : why_(std::move(why)) {}
  void set_header(const TraceHeader&) override {}
  void append(const Sample&) override {}
  void flush() override {}
  void maintain(double) override {}
  std::string query_json(const HistoryQuery&) const override { fail(); }
  TraceHeader header() const override { fail(); }
  size_t scan(double, double, const std::function<bool(Sample&)>&,
              ReadReport*) const override {
    fail();
  }
  std::string alerts_json(double, double) const override { fail(); }
  Health health() const override {
    Health h;
    h.status.usable = false;
    h.status.writable = false;
    h.last_error = why_;
    return h;
  }

 private:
  // No file path: this text reaches HTTP clients.
  [[noreturn]] static void fail() {
    throw std::runtime_error("history is not usable (see the serve log)");
  }
  std::string why_;
};

}  // namespace

std::unique_ptr<History> unusable_history(std::string why) {
  return std::make_unique<UnusableHistory>(std::move(why));
}

}  // namespace gd
