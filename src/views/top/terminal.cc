#include "views/top/terminal.h"

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <fcntl.h>
#include <langinfo.h>
#include <ncursesw/curses.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace gd::top {
namespace {

// ---- restoring the terminal from a signal handler -------------------------
// Filled while ncurses starts; read by the handlers, which may only call
// async-signal-safe functions (write, tcsetattr, signal, raise, _exit).
char g_reset[512];
size_t g_reset_len = 0;
struct termios g_saved_modes;
bool g_have_modes = false;
int g_tty_fd = -1;
volatile sig_atomic_t g_active = 0;
volatile sig_atomic_t g_quit = 0;
volatile sig_atomic_t g_resized = 0;
int g_signal_pipe[2] = {-1, -1};

constexpr std::array<int, 5> kCrashSignals = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE,
                                              SIGILL};
constexpr std::array<int, 3> kQuitSignals = {SIGTERM, SIGHUP, SIGINT};

void restore_from_handler() {
  if (!g_active) return;
  g_active = 0;
  if (g_reset_len > 0) {
    size_t off = 0;
    while (off < g_reset_len) {
      ssize_t n = ::write(g_tty_fd, g_reset + off, g_reset_len - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  if (g_have_modes) ::tcsetattr(g_tty_fd, TCSANOW, &g_saved_modes);
}

void on_crash(int sig) {
  restore_from_handler();
  // The default action (core dump, exit status) as if we had not been here.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void on_quit(int) {
  const int saved = errno;
  g_quit = 1;
  const char c = 'q';
  if (g_signal_pipe[1] >= 0) {
    [[maybe_unused]] ssize_t n = ::write(g_signal_pipe[1], &c, 1);
  }
  errno = saved;
}

// SIGWINCH: ours rather than ncurses' (which only acts inside getch), so a
// resize wakes the screen loop even while nothing else happens.
void on_winch(int) {
  const int saved = errno;
  g_resized = 1;
  const char c = 'w';
  if (g_signal_pipe[1] >= 0) {
    [[maybe_unused]] ssize_t n = ::write(g_signal_pipe[1], &c, 1);
  }
  errno = saved;
}

void append_cap(const char* name) {
  char* s = tigetstr(const_cast<char*>(name));
  if (s == nullptr || s == reinterpret_cast<char*>(-1)) return;
  size_t len = std::strlen(s);
  if (g_reset_len + len >= sizeof g_reset) return;
  std::memcpy(g_reset + g_reset_len, s, len);
  g_reset_len += len;
}

void append_raw(const char* s) {
  size_t len = std::strlen(s);
  if (g_reset_len + len >= sizeof g_reset) return;
  std::memcpy(g_reset + g_reset_len, s, len);
  g_reset_len += len;
}

// What endwin would send: attributes off, mouse reporting off, cursor
// visible, out of the alternate screen, keypad transmit mode off.
void save_reset_sequences() {
  g_reset_len = 0;
  append_cap("sgr0");
  append_raw("\033[?1000l\033[?1002l\033[?1006l");
  append_cap("cnorm");
  append_cap("rmcup");
  append_cap("rmkx");
}

void install_handlers() {
  if (g_signal_pipe[0] < 0 &&
      ::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw TerminalError("pipe2 failed");
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_crash;
  // SA_ONSTACK: on the thread's alternate stack (SignalStack), so a stack
  // overflow restores the terminal too.
  sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
  for (int s : kCrashSignals) ::sigaction(s, &sa, nullptr);
  sa.sa_handler = on_quit;
  sa.sa_flags = SA_RESTART;
  for (int s : kQuitSignals) ::sigaction(s, &sa, nullptr);
  sa.sa_handler = on_winch;
  ::sigaction(SIGWINCH, &sa, nullptr);
}

void uninstall_handlers() {
  for (int s : kCrashSignals) ::signal(s, SIG_DFL);
  for (int s : kQuitSignals) ::signal(s, SIG_DFL);
  ::signal(SIGWINCH, SIG_DFL);
}

// ---- styles ---------------------------------------------------------------

std::array<attr_t, kStyleCount> g_attrs{};

void set_style(Style s, short fg, short bg, attr_t extra, attr_t mono,
               bool colour) {
  const size_t i = static_cast<size_t>(s);
  if (!colour) {
    g_attrs[i] = mono;
    return;
  }
  const short pair = static_cast<short>(i + 1);
  init_pair(pair, fg, bg);
  g_attrs[i] = COLOR_PAIR(pair) | extra;
}

void setup_styles(bool colour) {
  // Monochrome: reverse for headings and the selection, bold for what
  // needs attention, underline on top of bold for what is critical, dim
  // for the secondary.
  const short none = -1;
  set_style(Style::kNormal, none, none, A_NORMAL, A_NORMAL, colour);
  set_style(Style::kDim, none, none, A_DIM, A_DIM, colour);
  set_style(Style::kBold, none, none, A_BOLD, A_BOLD, colour);
  set_style(Style::kTitle, COLOR_BLACK, COLOR_CYAN, A_NORMAL,
            A_REVERSE | A_BOLD, colour);
  set_style(Style::kHeading, COLOR_BLACK, COLOR_GREEN, A_NORMAL, A_REVERSE,
            colour);
  set_style(Style::kSorted, COLOR_BLACK, COLOR_CYAN, A_BOLD,
            A_REVERSE | A_BOLD | A_UNDERLINE, colour);
  set_style(Style::kGood, COLOR_GREEN, none, A_NORMAL, A_NORMAL, colour);
  set_style(Style::kWarn, COLOR_YELLOW, none, A_BOLD, A_BOLD, colour);
  set_style(Style::kCrit, COLOR_RED, none, A_BOLD, A_BOLD | A_UNDERLINE,
            colour);
  set_style(Style::kInfo, COLOR_CYAN, none, A_NORMAL, A_NORMAL, colour);
  set_style(Style::kBarUtil, COLOR_GREEN, none, A_BOLD, A_BOLD, colour);
  set_style(Style::kBarMem, COLOR_CYAN, none, A_BOLD, A_BOLD, colour);
  set_style(Style::kBarOrphan, COLOR_MAGENTA, none, A_BOLD,
            A_BOLD | A_UNDERLINE, colour);
  set_style(Style::kSelected, COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE,
            colour);
  set_style(Style::kTagged, COLOR_YELLOW, none, A_BOLD, A_BOLD | A_UNDERLINE,
            colour);
  set_style(Style::kKey, COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE, colour);
  set_style(Style::kChart, COLOR_GREEN, none, A_NORMAL, A_NORMAL, colour);
  set_style(Style::kChartAlt, COLOR_CYAN, none, A_NORMAL, A_BOLD, colour);
}

// Text for a terminal whose locale is not UTF-8: every non-ASCII character
// becomes '?', so columns still line up and nothing is misread.
std::string ascii_only(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c & 0xC0) != 0x80) {
      out += '?';
    }
  }
  return out;
}

}  // namespace

Terminal::Terminal(bool monochrome) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
    throw TerminalError("top needs a terminal (stdin and stdout)");
  const char* codeset = nl_langinfo(CODESET);
  unicode_ = codeset && std::strcmp(codeset, "UTF-8") == 0;
  g_tty_fd = STDOUT_FILENO;
  g_have_modes = ::tcgetattr(STDOUT_FILENO, &g_saved_modes) == 0;
  install_handlers();
  SCREEN* scr = newterm(nullptr, stdout, stdin);
  if (!scr) {
    uninstall_handlers();
    const char* term = std::getenv("TERM");
    throw TerminalError(std::string("cannot start the terminal (TERM=") +
                        (term ? term : "") + ")");
  }
  screen_ = scr;
  save_reset_sequences();
  g_active = 1;
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  nodelay(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  mousemask(
      BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED,
      nullptr);
  mouseinterval(0);
  colour_ = !monochrome && has_colors();
  if (colour_) {
    start_color();
    use_default_colors();
  }
  setup_styles(colour_);
  // Until the screen has once come back from endwin(), ncurses (6.4)
  // flushes its output at every cursor move: a frame went out as ~40 writes
  // of 7-25 bytes, each through the terminal's line discipline (~9% of
  // top's CPU at 1 Hz). Coming back, as after Ctrl-Z, restores the modes
  // set above and repaints the still blank screen; a frame is then one
  // write or a few.
  endwin();
  refresh();
  curs_set(0);
}

Terminal::Terminal(bool monochrome, std::FILE* out, const char* term, int width,
                   int height)
    : handlers_(false) {
  unicode_ = true;
  use_env(FALSE);  // the size below, not the caller's terminal's
  std::string lines = std::to_string(height), cols = std::to_string(width);
  setenv("LINES", lines.c_str(), 1);
  setenv("COLUMNS", cols.c_str(), 1);
  SCREEN* scr = newterm(term, out, stdin);
  if (!scr) throw TerminalError(std::string("cannot start terminal ") + term);
  screen_ = scr;
  resizeterm(height, width);
  colour_ = !monochrome && has_colors();
  if (colour_) {
    start_color();
    use_default_colors();
  }
  setup_styles(colour_);
}

Terminal::~Terminal() {
  endwin();
  delscreen(static_cast<SCREEN*>(screen_));
  if (handlers_) {
    g_active = 0;
    uninstall_handlers();
  }
}

int Terminal::width() const { return COLS; }
int Terminal::height() const { return LINES; }
int Terminal::input_fd() const { return STDIN_FILENO; }
int Terminal::signal_fd() { return g_signal_pipe[0]; }
bool Terminal::take_resize() {
  if (!g_resized) return false;
  g_resized = 0;
  struct winsize ws {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 ||
      ws.ws_col == 0)
    return false;
  resizeterm(ws.ws_row, ws.ws_col);
  return true;
}

bool Terminal::quit_requested() {
  if (g_signal_pipe[0] >= 0) {
    char buf[16];
    while (::read(g_signal_pipe[0], buf, sizeof buf) > 0) {
    }
  }
  return g_quit != 0;
}

namespace {

// UTF-8 (already validated by terminal_safe) to wide characters, without
// the C library's multibyte machinery: most of what ncurses' own addstr
// spends per character.
void to_wide(const std::string& in, std::wstring& out) {
  out.clear();
  for (size_t i = 0; i < in.size();) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    char32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c, n = 1;
    } else if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F, n = 2;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F, n = 3;
    } else {
      cp = c & 0x07, n = 4;
    }
    if (i + n > in.size()) break;
    for (size_t k = 1; k < n; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(in[i + k]) & 0x3F);
    out += static_cast<wchar_t>(cp);
    i += n;
  }
}

bool same_line(const Line& a, const Line& b) {
  if (a.spans.size() != b.spans.size() || a.fill != b.fill) return false;
  for (size_t i = 0; i < a.spans.size(); ++i)
    if (a.spans[i].style != b.spans[i].style ||
        a.spans[i].text != b.spans[i].text)
      return false;
  return true;
}

// Columns ncurses gives a character: the C library's wcwidth, as ncursesw
// asks it (0 for a combining mark, which joins the cell before it; -1 for
// one it cannot print).
int cell_width(wchar_t c) { return c >= 0x20 && c < 0x7f ? 1 : ::wcwidth(c); }

// Columns of chars[from, to); -1 when one of them is not printable.
int columns(const std::wstring& chars, size_t from, size_t to) {
  int w = 0;
  for (size_t i = from; i < to; ++i) {
    const int c = cell_width(chars[i]);
    if (c < 0) return -1;
    w += c;
  }
  return w;
}

}  // namespace

void Terminal::put(const DrawnLine& now, size_t from, size_t to) {
  for (size_t i = from; i < to;) {
    size_t run = i + 1;
    while (run < to && now.styles[run] == now.styles[i]) ++run;
    attrset(g_attrs[static_cast<size_t>(now.styles[i])]);
    addnwstr(now.chars.data() + i, static_cast<int>(run - i));
    i = run;
  }
}

// Most changes of a line from one second to the next are a few characters:
// a number, a chart's newest column. Writing the whole line made ncurses
// take in and compare every character of it; only the changed stretch is
// written, where it keeps the same width (else the rest of the line).
void Terminal::draw_changes(int y, const DrawnLine& before,
                            const DrawnLine& now) {
  const std::wstring &a = before.chars, &b = now.chars;
  const size_t m = a.size(), n = b.size();
  auto same = [&](size_t i, size_t j) {
    return a[i] == b[j] && before.styles[i] == now.styles[j];
  };
  size_t p = 0;
  while (p < m && p < n && same(p, p)) ++p;
  // A combining mark belongs to the cell of the character before it.
  while (p > 0 &&
         ((p < n && cell_width(b[p]) == 0) || (p < m && cell_width(a[p]) == 0)))
    --p;
  size_t tail = 0;
  while (tail < m - p && tail < n - p && same(m - 1 - tail, n - 1 - tail))
    ++tail;
  while (tail > 0 && cell_width(b[n - tail]) == 0) --tail;
  const int x = columns(b, 0, p);
  const int was = columns(a, p, m - tail), is = columns(b, p, n - tail);
  if (x >= 0 && was >= 0 && is >= 0 && was == is) {
    move(y, x);
    put(now, p, n - tail);
    // Where it wrote to: after it, or on the next line's start when the
    // stretch ended the line.
    const int cy = getcury(stdscr), cx = getcurx(stdscr);
    if ((cy == y && cx == x + is) || (x + is == COLS && cy == y + 1 && cx == 0))
      return;
  }
  // Not the same width (or not a width ncurses agrees on): the whole line.
  move(y, 0);
  put(now, 0, n);
  // A full line leaves the cursor on the next one: clear only a short
  // line's rest (lines are full width, so this is for safety).
  if (getcury(stdscr) == y) clrtoeol();
}

void Terminal::draw(const Screen& s) {
  // Lines that did not change since the last frame are left as they are
  // (ncurses keeps them); after a resize everything is drawn again.
  const bool same_size = drawn_width_ == s.width && drawn_height_ == s.height &&
                         s.width == COLS && s.height == LINES;
  if (!same_size) {
    erase();
    drawn_.clear();
  }
  const int rows = std::min(static_cast<int>(s.lines.size()), LINES);
  drawn_.resize(static_cast<size_t>(std::max(rows, 0)));
  DrawnLine now;
  std::wstring wide;
  for (int y = 0; y < rows; ++y) {
    const Line& line = s.lines[static_cast<size_t>(y)];
    DrawnLine& before = drawn_[static_cast<size_t>(y)];
    if (same_size && same_line(line, before.line)) continue;
    now.chars.clear();
    now.styles.clear();
    for (const Span& span : line.spans) {
      if (unicode_) {
        to_wide(span.text, wide);
      } else {
        const std::string ascii = ascii_only(span.text);
        wide.assign(ascii.begin(), ascii.end());
      }
      now.chars += wide;
      now.styles.insert(now.styles.end(), wide.size(), span.style);
    }
    draw_changes(y, before, now);
    before.line = line;
    std::swap(before.chars, now.chars);
    std::swap(before.styles, now.styles);
  }
  attrset(A_NORMAL);
  refresh();
  drawn_width_ = s.width;
  drawn_height_ = s.height;
}

std::vector<std::string> Terminal::cells_for_test() const {
  std::vector<std::string> out;
  for (int y = 0; y < LINES; ++y) {
    std::string row;
    for (int x = 0; x < COLS; ++x) {
      cchar_t c;
      wchar_t wch[CCHARW_MAX + 1] = {};
      attr_t attrs = 0;
      short pair = 0;
      if (mvwin_wch(stdscr, y, x, &c) != OK ||
          getcchar(&c, wch, &attrs, &pair, nullptr) == ERR)
        continue;
      char word[64];
      for (size_t i = 0; i < CCHARW_MAX && wch[i]; ++i) {
        std::snprintf(word, sizeof word, "U+%04X",
                      static_cast<unsigned>(wch[i]));
        row += word;
      }
      std::snprintf(word, sizeof word, "/%lx.%d ",
                    static_cast<unsigned long>(attrs), pair);
      row += word;
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<Key> Terminal::read_keys(bool& resized) {
  std::vector<Key> keys;
  resized = false;
  for (;;) {
    wint_t ch = 0;
    int r = get_wch(&ch);
    if (r == ERR) break;
    Key k;
    if (r == KEY_CODE_YES) {
      switch (ch) {
        case KEY_UP:
          k.kind = Key::Kind::kUp;
          break;
        case KEY_DOWN:
          k.kind = Key::Kind::kDown;
          break;
        case KEY_LEFT:
          k.kind = Key::Kind::kLeft;
          break;
        case KEY_RIGHT:
          k.kind = Key::Kind::kRight;
          break;
        case KEY_PPAGE:
          k.kind = Key::Kind::kPageUp;
          break;
        case KEY_NPAGE:
          k.kind = Key::Kind::kPageDown;
          break;
        case KEY_HOME:
          k.kind = Key::Kind::kHome;
          break;
        case KEY_END:
          k.kind = Key::Kind::kEnd;
          break;
        case KEY_ENTER:
          k.kind = Key::Kind::kEnter;
          break;
        case KEY_BACKSPACE:
          k.kind = Key::Kind::kBackspace;
          break;
        case KEY_BTAB:
          k.kind = Key::Kind::kBackTab;
          break;
        case KEY_F(1):
          k.kind = Key::Kind::kF1;
          break;
        case KEY_F(10):
          k.kind = Key::Kind::kF10;
          break;
        case KEY_RESIZE:
          resized = true;
          continue;
        case KEY_MOUSE: {
          MEVENT ev;
          if (getmouse(&ev) != OK) continue;
          k.y = ev.y;
          k.x = ev.x;
          if (ev.bstate & BUTTON4_PRESSED)
            k.kind = Key::Kind::kWheelUp;
          else if (ev.bstate & BUTTON5_PRESSED)
            k.kind = Key::Kind::kWheelDown;
          else if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
            k.kind = Key::Kind::kMouseClick;
          else
            continue;
          break;
        }
        default:
          continue;
      }
    } else {
      switch (ch) {
        case 27:
          k.kind = Key::Kind::kEscape;
          break;
        case 3:
          k.kind = Key::Kind::kInterrupt;
          break;
        case '\t':
          k.kind = Key::Kind::kTab;
          break;
        case '\r':
        case '\n':
          k.kind = Key::Kind::kEnter;
          break;
        case 8:
        case 127:
          k.kind = Key::Kind::kBackspace;
          break;
        default:
          k.kind = Key::Kind::kChar;
          k.ch = static_cast<char32_t>(ch);
      }
    }
    keys.push_back(k);
  }
  return keys;
}

}  // namespace gd::top
