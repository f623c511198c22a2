#!/usr/bin/env python3
"""png_colors.py FILE.png RRGGBB...: prints, for each colour, how many pixels of
the PNG have it exactly (8-bit RGB or RGBA, non-interlaced, as Chromium's
screenshots are). Only the standard library: zlib and the PNG filters."""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(path + ": not a PNG")
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                sys.exit(path + ": expected 8-bit RGB(A), not interlaced")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, 4 if ctype == 6 else 3, zlib.decompress(idat)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def rows(width, height, bpp, raw):
    stride = width * bpp
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        ftype, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, ul = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + left) & 255
            elif ftype == 2:
                line[i] = (line[i] + up) & 255
            elif ftype == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 255
            elif ftype == 4:
                line[i] = (line[i] + paeth(left, up, ul)) & 255
        yield line
        prev = line


def main():
    width, height, bpp, raw = read_png(sys.argv[1])
    wanted = [bytes.fromhex(c) for c in sys.argv[2:]]
    counts = [0] * len(wanted)
    for line in rows(width, height, bpp, raw):
        for x in range(0, len(line), bpp):
            px = bytes(line[x:x + 3])
            for k, w in enumerate(wanted):
                if px == w:
                    counts[k] += 1
    print(" ".join(str(c) for c in counts))


if __name__ == "__main__":
    main()
