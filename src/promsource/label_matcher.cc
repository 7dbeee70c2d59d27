#include "promsource/label_matcher.h"

#include <stdexcept>

namespace gd::promsource {
namespace {

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

class Reader {
 public:
  explicit Reader(const std::string& t) : t_(t) {}
  void spaces() {
    while (at_ < t_.size() && (t_[at_] == ' ' || t_[at_] == '\t')) ++at_;
  }
  bool eat(char c) {
    if (at_ < t_.size() && t_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("'" + t_ + "': " + what + " at byte " +
                                std::to_string(at_ + 1));
  }
  void name() {
    if (at_ >= t_.size() || !name_start(t_[at_])) fail("a label name expected");
    while (at_ < t_.size() && name_char(t_[at_])) ++at_;
  }
  void op() {
    if (eat('=')) {
      eat('~');
      return;
    }
    if (eat('!') && (eat('=') || eat('~'))) return;
    fail("=, !=, =~ or !~ expected");
  }
  void value() {
    if (!eat('"')) fail("a double-quoted value expected");
    while (at_ < t_.size() && t_[at_] != '"') {
      const auto c = static_cast<unsigned char>(t_[at_]);
      if (c < 0x20 || c == 0x7f) fail("a control byte");
      if (c == '\\') {
        ++at_;
        if (at_ >= t_.size()) break;
      }
      ++at_;
    }
    if (!eat('"')) fail("the value's closing quote is missing");
  }
  bool done() const { return at_ == t_.size(); }

 private:
  const std::string& t_;
  size_t at_ = 0;
};

}  // namespace

void check_label_matcher(const std::string& text) {
  if (text.size() > kLabelMatcherMax)
    throw std::invalid_argument("longer than " +
                                std::to_string(kLabelMatcherMax) + " bytes");
  Reader r(text);
  r.spaces();
  if (!r.eat('{')) r.fail("'{' expected");
  for (;;) {
    r.spaces();
    r.name();
    r.spaces();
    r.op();
    r.spaces();
    r.value();
    r.spaces();
    if (r.eat('}')) break;
    if (!r.eat(',')) r.fail("',' or '}' expected");
    r.spaces();
    if (r.eat('}')) break;  // PromQL allows a trailing comma
  }
  r.spaces();
  if (!r.done()) r.fail("nothing may follow '}'");
}

}  // namespace gd::promsource
