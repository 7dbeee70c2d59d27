#include "common/secret_file.h"

#include <fstream>
#include <stdexcept>

#include "common/terminal_text.h"

namespace gd {

std::string read_secret_line(const std::string& path) {
  const std::string where = terminal_safe(path, 256);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(where + ": cannot read it");
  // One byte more than the bound: a line end within it, or too long.
  std::string head(kMaxSecretLineBytes + 2, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  size_t end = head.find('\n');
  if (end == std::string::npos) {
    if (head.size() > kMaxSecretLineBytes + 1)
      throw std::invalid_argument(where + ": the first line is longer than " +
                                  std::to_string(kMaxSecretLineBytes) +
                                  " bytes");
    end = head.size();
  }
  std::string line = head.substr(0, end);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kMaxSecretLineBytes)
    throw std::invalid_argument(where + ": the first line is longer than " +
                                std::to_string(kMaxSecretLineBytes) + " bytes");
  if (line.empty())
    throw std::invalid_argument(where + ": the first line is empty");
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || c == 0x7F)
      throw std::invalid_argument(
          where + ": the first line holds a control byte (" +
          terminal_safe(std::string(1, static_cast<char>(c))) + " at byte " +
          std::to_string(i + 1) +
          "), which a request header cannot carry; write it on one line "
          "ending in a newline");
  }
  return line;
}

}  // namespace gd
