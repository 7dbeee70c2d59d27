#!/usr/bin/python3
"""Draws a terminal capture with ANSI colours (tmux capture-pane -e) as a
PNG: 8/16 colours, bold, reverse; DejaVu Sans Mono. Needs python3-pil.
    ansi_png.py CAPTURE.txt OUT.png [COLUMNS]   (default 200)"""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
PALETTE = [(0x1e, 0x1e, 0x1e), (0xe0, 0x50, 0x50), (0x5f, 0xc8, 0x5f), (0xe5, 0xc0, 0x4a),
           (0x5a, 0x8d, 0xe0), (0xc6, 0x6b, 0xd6), (0x4f, 0xc1, 0xc9), (0xd0, 0xd0, 0xd0)]
FG, BG = (0xd0, 0xd0, 0xd0), (0x1e, 0x1e, 0x1e)
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def main():
    lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n")
    font, bold = ImageFont.truetype(FONT, 14), ImageFont.truetype(BOLD, 14)
    cw, ch = int(font.getlength("M")), 18
    cols = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    img = Image.new("RGB", (cols * cw + 16, len(lines) * ch + 16), BG)
    d = ImageDraw.Draw(img)
    # As on a terminal, the attributes carry on from line to line (tmux's
    # capture sends them only where they change).
    fg, bg, b, rev, dim = FG, None, False, False, False
    for y, line in enumerate(lines):
        x = 0
        pos = 0
        for m in list(SGR.finditer(line)) + [None]:
            text = line[pos:m.start() if m else len(line)]
            for c in text:
                f, k = (bg or BG, fg) if rev else (fg, bg)
                if dim and not rev:
                    f = tuple(v // 2 + 20 for v in f)
                px, py = 8 + x * cw, 8 + y * ch
                if k:
                    d.rectangle([px, py, px + cw, py + ch], fill=k)
                if c != " ":
                    d.text((px, py), c, font=bold if b else font, fill=f)
                x += 1
            if not m:
                break
            pos = m.end()
            codes = [int(c) if c else 0 for c in m.group(1).split(";")]
            i = 0
            while i < len(codes):
                c = codes[i]
                if c == 0:
                    fg, bg, b, rev, dim = FG, None, False, False, False
                elif c == 1:
                    b = True
                elif c == 2:
                    dim = True
                elif c == 7:
                    rev = True
                elif 30 <= c <= 37:
                    fg = PALETTE[c - 30]
                elif c == 39:
                    fg = FG
                elif 40 <= c <= 47:
                    bg = PALETTE[c - 40]
                elif c == 49:
                    bg = None
                elif 90 <= c <= 97:
                    fg = PALETTE[c - 90]
                elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                    v = codes[i + 2]
                    col = PALETTE[v % 8] if v < 16 else FG
                    if c == 38:
                        fg = col
                    else:
                        bg = col
                    i += 2
                i += 1
    img.save(sys.argv[2])


if __name__ == "__main__":
    main()
