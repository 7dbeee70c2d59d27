// Sizes in binary units, for people. One implementation, three styles,
// because each is asserted by what users read today:
//   human_bytes        "0 B", "1.5 KiB", "512.0 MiB", "80.0 GiB"  (status, ps,
//                      checklist, kill)
//   human_bytes_brief  "0 B", "512 KiB", "400 MiB", "30.0 GiB"    (who,
//                      watch-leak, ps --tree): whole KiB/MiB in narrow columns
//   gib_text           "0.5 GiB", "79.2 GiB" always in GiB         (diagnose
//                      evidence, where sizes of one finding compare at a
//                      glance)
#pragma once

#include <cstdint>
#include <string>

namespace gd {

std::string human_bytes(uint64_t bytes);
std::string human_bytes_brief(uint64_t bytes);
std::string gib_text(uint64_t bytes);

}  // namespace gd
