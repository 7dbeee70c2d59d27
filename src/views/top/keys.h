// What each key (and mouse click) does to the state of `top`. Pure: the
// caller supplies what is on screen (rows, hits, findings) and carries out
// the returned Action (quit, start a kill, open who, control a replay).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "views/top/rows.h"
#include "views/top/screen.h"
#include "views/top/state.h"

namespace gd::top {

struct Key {
  enum class Kind {
    kChar,  // ch
    kUp,
    kDown,
    kLeft,
    kRight,
    kPageUp,
    kPageDown,
    kHome,
    kEnd,
    kEnter,
    kEscape,
    kBackspace,
    kTab,
    kBackTab,
    kF1,
    kF10,
    kMouseClick,  // y, x
    kWheelUp,
    kWheelDown,
    kInterrupt,  // Ctrl-C
  };
  Kind kind = Kind::kChar;
  char32_t ch = 0;
  int y = 0, x = 0;
};

struct Action {
  enum class Kind {
    kNone,
    kQuit,
    kKill,              // pids: plan a kill of them
    kConfirmKill,       // y in the kill dialog: SIGTERM
    kConfirmKillForce,  // f: SIGTERM, then SIGKILL after the wait
    kCloseKill,         // the dialog closed
    kWho,               // gpu: open who for it
    kReplayPause,
    kReplayFaster,
    kReplaySlower,
    kReplayBack,
    kReplayForward,
  };
  Kind kind = Kind::kNone;
  std::vector<uint32_t> pids{};
  int gpu = 0;
};

struct KeyContext {
  const std::vector<ProcRow>* rows = nullptr;
  const Screen* screen = nullptr;  // for mouse hits
  size_t findings = 0;             // in the strip
  int page = 10;                   // process rows on screen
  std::vector<int> gpus;           // indices, for the GPU filter's cycle
  std::vector<std::string> users;  // for the user filter's cycle
  double now = 0;                  // for messages
  bool kill_running = false;       // a kill session is under way
};

Action handle_key(TopState& st, const Key& key, const KeyContext& ctx);

// After the rows changed: keep the selection on its process (or the first
// row) and in view.
void settle_selection(TopState& st, const std::vector<ProcRow>& rows, int page);

}  // namespace gd::top
