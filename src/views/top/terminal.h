// The one place `top` meets ncurses (wide-character build, libncursesw):
// starts and restores the terminal, maps styles to colours (or to bold /
// reverse / underline in monochrome), copies a Screen to it, and reads keys
// and mouse clicks. The terminal is restored on every way out: a normal
// exit, an exception, SIGTERM/SIGHUP/SIGINT (which ask the loop to end) and
// a crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL), whose handler
// writes the saved reset sequences and the saved terminal modes with
// async-signal-safe calls only before the default action runs. The handler
// runs on an alternate stack, so a stack overflow restores the terminal
// too: on this thread, and on a feed's or kill job's thread (each has a
// SignalStack of its own).
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/signal_stack.h"
#include "views/top/keys.h"
#include "views/top/screen.h"

namespace gd::top {

struct TerminalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Terminal {
 public:
  // Throws TerminalError when stdin/stdout is not a terminal or ncurses
  // cannot start on it.
  explicit Terminal(bool monochrome);
  // On `out` (a file, /dev/null) with terminal type `term`, no tty needed
  // and no signal handlers: for benchmarks of the drawing.
  Terminal(bool monochrome, std::FILE* out, const char* term, int width,
           int height);
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  int width() const;
  int height() const;
  bool unicode() const { return unicode_; }
  bool colour() const { return colour_; }

  void draw(const Screen& s);
  // Every key waiting (none: empty). A resize is handled here (the next
  // width()/height() are new) and reported as `resized`.
  std::vector<Key> read_keys(bool& resized);

  // Readable when keys wait (stdin).
  int input_fd() const;
  // Readable when SIGTERM, SIGHUP or SIGINT arrived; quit_requested() then
  // says so.
  static int signal_fd();
  static bool quit_requested();
  // After SIGWINCH (signal_fd readable): takes the terminal's new size;
  // true when it changed.
  bool take_resize();

  // What ncurses holds for the screen (not what reached the terminal):
  // each line's cells as "U+XXXX.../attributes" words, for tests that a
  // frame drawn over another leaves the screen a frame drawn alone does.
  std::vector<std::string> cells_for_test() const;

 private:
  // A line as last drawn: its spans (a line whose spans are the same is
  // left alone) and its characters with each one's style (a changed line
  // is drawn from its first changed character to its last).
  struct DrawnLine {
    Line line;
    std::wstring chars;
    std::vector<Style> styles;
  };
  void draw_changes(int y, const DrawnLine& before, const DrawnLine& now);
  void put(const DrawnLine& now, size_t from, size_t to);

  bool unicode_ = true;
  bool colour_ = false;
  bool handlers_ = true;
  std::vector<DrawnLine> drawn_;
  int drawn_width_ = 0, drawn_height_ = 0;
  void* screen_ = nullptr;    // SCREEN*
  SignalStack signal_stack_;  // this (the screen's) thread's
};

}  // namespace gd::top
