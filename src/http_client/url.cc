#include "http_client/url.h"

#include <algorithm>

namespace gd::http {
namespace {

// `text` without what is before an '@' of its authority ("user:password"):
// a refused URL is shown, its password never is.
std::string without_userinfo(const std::string& text) {
  const size_t scheme = text.find("://");
  const size_t from = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t end = std::min(text.find_first_of("/?#", from), text.size());
  const size_t at = text.rfind('@', end);
  if (at == std::string::npos || at < from) return text;
  return text.substr(0, from) + "***" + text.substr(at);
}

// One line for a URL that is refused: the URL (cut, made one line) and why.
std::invalid_argument bad(const std::string& url, const std::string& why) {
  const std::string text = without_userinfo(url);
  std::string shown = text.substr(0, 200);
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) c = '?';
  if (text.size() > shown.size()) shown += "...";
  return std::invalid_argument("'" + shown + "': " + why);
}

// "1".."65535" only (no sign, no spaces, no leading junk).
int port_number(const std::string& text, const std::string& port) {
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) digits = digits && c >= '0' && c <= '9';
  int value = digits ? std::stoi(port) : 0;
  if (value < 1 || value > 65535)
    throw bad(text,
              "port '" + port.substr(0, 20) + "' is not a number in 1..65535");
  return value;
}

// "host[:port]" or "[v6]:port" into url.host and url.port.
void split_authority(const std::string& text, const std::string& authority,
                     Url& url) {
  std::string port;
  bool has_port = false;
  if (authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos)
      throw bad(text, "no ']' after the IPv6 address");
    url.host = authority.substr(1, close - 1);
    std::string rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':')
      throw bad(text, "only :PORT may follow ']'");
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
  } else {
    auto colon = authority.find(':');
    if (colon != authority.rfind(':'))
      throw bad(text, "put an IPv6 address in brackets: http://[::1]:9856");
    url.host = authority.substr(0, colon);
    has_port = colon != std::string::npos;
    if (has_port) port = authority.substr(colon + 1);
  }
  if (url.host.empty()) throw bad(text, "no host");
  url.port = has_port ? port_number(text, port) : url.https ? 443 : 80;
}

}  // namespace

Url parse_url(const std::string& text) {
  if (text.size() > kMaxUrlChars)
    throw bad(text,
              "longer than " + std::to_string(kMaxUrlChars) + " characters");
  for (char c : text)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      throw bad(text, "spaces or control characters");
  Url url;
  url.text = text;
  std::string scheme;
  if (text.rfind("http://", 0) == 0) {
    scheme = "http://";
  } else if (text.rfind("https://", 0) == 0) {
    scheme = "https://";
  } else {
    throw bad(text, "not an http:// or https:// URL");
  }
  url.https = scheme == "https://";
  std::string rest = text.substr(scheme.size());
  if (rest.find('#') != std::string::npos)
    throw bad(text, "a fragment is not sent to a server");
  if (auto q = rest.find('?'); q != std::string::npos) {
    url.query = rest.substr(q + 1);
    rest.resize(q);
  }
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  url.path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!url.path.empty() && url.path.back() == '/') url.path.pop_back();
  if (authority.empty()) throw bad(text, "no host");
  if (authority.find('@') != std::string::npos)
    throw bad(text, "put credentials in a file, not in the URL");
  url.scheme_host_port = scheme + authority;
  split_authority(text, authority, url);
  return url;
}

}  // namespace gd::http
