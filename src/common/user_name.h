// The login name of a uid, as ps and top show it.
#pragma once

#include <cstdint>
#include <string>

namespace gd {

// From the passwd database (getpwuid_r: NSS, so LDAP users too); the uid in
// decimal when it has no entry.
std::string user_name_of(uint32_t uid);

}  // namespace gd
