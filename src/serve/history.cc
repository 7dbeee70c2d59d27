#include "serve/history.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#ifdef GD_HAVE_STORE
#include "store/history_store.h"
#endif

namespace gd {

#ifdef GD_HAVE_STORE
namespace {

class StoreHistory : public History {
 public:
  explicit StoreHistory(std::unique_ptr<HistoryStore> store)
      : store_(std::move(store)) {}
  void set_header(const TraceHeader& header) override {
    store_->set_header(header);
  }
  void append(const Sample& sample) override { store_->append(sample); }
  void flush() override { store_->flush(); }
  void maintain(double now) override { store_->maintain(now); }

  std::string query_json(const HistoryQuery& q) const override {
    std::vector<HistorySeries> series;
    try {
      series = store_->query(q.metric, q.gpu, q.pid, q.since, q.until, q.step);
    } catch (const StoreError& e) {
      throw HistoryQueryError(e.what());
    }
    using nlohmann::json;
    json out = {{"metric", q.metric},
                {"since", q.since},
                {"until", q.until},
                {"step", q.step}};
    json arr = json::array();
    for (const auto& s : series) {
      json points = json::array();
      for (const auto& p : s.points) points.push_back({p.t, p.v});
      arr.push_back({{"gpu", s.gpu ? json(*s.gpu) : json(nullptr)},
                     {"pid", s.pid ? json(*s.pid) : json(nullptr)},
                     {"points", std::move(points)}});
    }
    out["series"] = std::move(arr);
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
  }

 private:
  std::unique_ptr<HistoryStore> store_;
};

}  // namespace

bool history_built() { return true; }

std::unique_ptr<History> open_history(const std::string& path,
                                      double retention_s) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw std::runtime_error(parent.string() +
                               ": cannot create: " + ec.message());
  }
  StoreOptions o;
  o.path = path;
  o.retention_s = retention_s;
  return std::make_unique<StoreHistory>(HistoryStore::open(o));
}

#else

bool history_built() { return false; }

std::unique_ptr<History> open_history(const std::string&, double) {
  return nullptr;
}

#endif

}  // namespace gd
