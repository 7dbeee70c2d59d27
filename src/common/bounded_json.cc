#include "common/bounded_json.h"

#include <string>

namespace gd {

JsonTooDeep::JsonTooDeep()
    : std::runtime_error("nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels") {}

nlohmann::json parse_bounded_json(std::string_view text, int max_depth) {
  using json = nlohmann::json;
  // `depth` is the number of containers already open around the event.
  json::parser_callback_t refuse_deep =
      [max_depth](int depth, json::parse_event_t event, json&) {
        if ((event == json::parse_event_t::object_start ||
             event == json::parse_event_t::array_start) &&
            depth >= max_depth)
          throw JsonTooDeep();
        return true;
      };
  return json::parse(text, refuse_deep, /*allow_exceptions=*/false);
}

}  // namespace gd
