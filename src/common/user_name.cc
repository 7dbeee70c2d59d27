#include "common/user_name.h"

#include <pwd.h>

namespace gd {

std::string user_name_of(uint32_t uid) {
  passwd pw{}, *result = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &result) == 0 && result &&
      result->pw_name)
    return result->pw_name;
  return std::to_string(uid);
}

}  // namespace gd
