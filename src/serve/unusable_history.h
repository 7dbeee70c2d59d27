// serve's history when the database is a gpudoctor history it must not
// use (a schema version it does not know: a newer gpudoctor's file after a
// downgrade). serve keeps monitoring without history rather than migrate
// or overwrite that file: nothing is written, history and alert queries
// fail with "history is not usable (see the serve log)", and health()
// reports the store as not usable (/healthz "degraded").
#pragma once

#include <memory>
#include <string>

#include "serve/history.h"

namespace gd {

std::unique_ptr<History> unusable_history(std::string why);

}  // namespace gd
