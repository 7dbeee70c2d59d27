// The repeated messages of a remote-read reply walked one at a time: a
// ReadResponse's results and their series, a ChunkedReadResponse's series,
// each handed out as its bytes without building the whole message first.
// A reply of 64 MiB of empty series (two bytes each) parsed whole is 33
// million objects (2.9 GB); walked, it is one series at a time, each
// counted against the bounds before it is built.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gd::http::prom {

// Calls `fn` with the bytes of each length-delimited field `number` of the
// protobuf message `message`, in order, skipping every other field.
// Returns "" or why the walk stopped: `fn`'s refusal, or a message that is
// not protobuf (a field running past the end, a group, a bad varint).
std::string each_message(
    std::string_view message, uint32_t number,
    const std::function<std::string(std::string_view)>& fn);

}  // namespace gd::http::prom
