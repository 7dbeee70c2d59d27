#include "common/bounded_json.h"

#include <string>

namespace gd {
namespace {

using json = nlohmann::json;

// json::parse's own DOM builder, refusing to open a container deeper than
// the bound. (The parser callback of json::parse could refuse too, but it
// rescans the enclosing array at every closed object: quadratic in the
// array's length.)
class BoundedDom : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  BoundedDom(json& out, int max_depth)
      : json_sax_dom_parser(out, /*allow_exceptions=*/false),
        max_depth_(max_depth) {}

  bool start_object(std::size_t n) {
    return open() && json_sax_dom_parser::start_object(n);
  }
  bool end_object() {
    --depth_;
    return json_sax_dom_parser::end_object();
  }
  bool start_array(std::size_t n) {
    return open() && json_sax_dom_parser::start_array(n);
  }
  bool end_array() {
    --depth_;
    return json_sax_dom_parser::end_array();
  }
  bool too_deep() const { return too_deep_; }

 private:
  bool open() {
    too_deep_ = ++depth_ > max_depth_;
    return !too_deep_;
  }

  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
};

}  // namespace

JsonTooDeep::JsonTooDeep()
    : std::runtime_error("nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels") {}

nlohmann::json parse_bounded_json(std::string_view text, int max_depth) {
  json out;
  BoundedDom dom(out, max_depth);
  const bool ok = json::sax_parse(text, &dom);
  if (dom.too_deep()) throw JsonTooDeep();
  if (!ok || dom.is_errored()) return json(json::value_t::discarded);
  return out;
}

}  // namespace gd
