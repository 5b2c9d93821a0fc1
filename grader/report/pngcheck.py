#!/usr/bin/env python3
"""pngcheck.py FILE WIDTH HEIGHT [RRGGBB ...] - is this PNG a browser's screenshot of a page, not a blank one?
make test's report section (grader/test/report.sh) checks each report page's screenshot with it. Standard library
only (zlib): no PIL.

Checks that FILE is a PNG of WIDTH x HEIGHT pixels with more than one colour and holding every RRGGBB given (a
colour only that page has, such as the report page's header, grader/report/page.css: then the screenshot is of
that page and not of an error page). Prints one line: the size, how many colours, what is missing. Exit 0 when
all holds, 1 when not, 2 when FILE is not a PNG this reads (8-bit grey, RGB, grey+alpha or RGBA, not interlaced).
"""
import itertools
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type: channels per pixel


def unfilter(raw, width, height, bpp):
    """the pixel bytes of each row, PNG's five filters undone"""
    stride = width * bpp
    rows, prev = [], bytes(stride)
    lo7 = int.from_bytes(b'\x7f' * stride, 'big')
    hi1 = int.from_bytes(b'\x80' * stride, 'big')
    for y in range(height):
        at = y * (stride + 1)
        kind, line = raw[at], raw[at + 1:at + 1 + stride]
        if kind == 0:
            cur = bytes(line)
        elif kind == 2:  # up: each byte plus the one above, mod 256, all at once
            a, b = int.from_bytes(line, 'big'), int.from_bytes(prev, 'big')
            cur = (((a & lo7) + (b & lo7)) ^ ((a ^ b) & hi1)).to_bytes(stride, 'big')
        elif kind == 1:  # sub: a running sum of each channel, mod 256
            out = bytearray(stride)
            for c in range(bpp):
                out[c::bpp] = bytes(map((255).__and__, itertools.accumulate(line[c::bpp])))
            cur = bytes(out)
        elif kind in (3, 4):  # average, paeth: byte by byte
            out = bytearray(line)
            for i in range(stride):
                left = out[i - bpp] if i >= bpp else 0
                up = prev[i]
                if kind == 3:
                    out[i] = (out[i] + ((left + up) >> 1)) & 255
                else:
                    ul = prev[i - bpp] if i >= bpp else 0
                    p = left + up - ul
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                    out[i] = (out[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 255
            cur = bytes(out)
        else:
            raise ValueError(f'row {y} has filter {kind}')
        rows.append(cur)
        prev = cur
    return rows


def read_png(path):
    """(width, height, channels, rows of pixel bytes); ValueError when it is not a PNG this reads"""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, head = 8, [], None
    while pos + 8 <= len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            head = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
    if not head:
        raise ValueError('no IHDR')
    width, height, depth, ctype, _, _, interlace = head
    if depth != 8 or ctype not in CHANNELS or interlace:
        raise ValueError(f'bit depth {depth}, colour type {ctype}, interlace {interlace}: not read here')
    ch = CHANNELS[ctype]
    return width, height, ch, unfilter(zlib.decompress(b''.join(idat)), width, height, ch)


def colours(rows, ch):
    """the set of RGB colours (3 bytes each) in the rows"""
    seen = set()
    for row in rows:
        if ch >= 3:
            seen.update(zip(row[0::ch], row[1::ch], row[2::ch]))
        else:
            seen.update((g, g, g) for g in row[0::ch])
    return seen


def main():
    if len(sys.argv) < 4:
        print('usage: pngcheck.py FILE WIDTH HEIGHT [RRGGBB ...]', file=sys.stderr)
        return 2
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    try:
        w, h, ch, rows = read_png(path)
    except (OSError, ValueError, zlib.error) as e:
        print(f'{path}: {e}')
        return 2
    seen = colours(rows, ch)
    want = [c.lstrip('#').lower() for c in sys.argv[4:]]
    missing = [c for c in want if tuple(bytes.fromhex(c)) not in seen]
    problems = ([f'not {want_w}x{want_h}'] if (w, h) != (want_w, want_h) else []) + \
        (['one colour only: blank'] if len(seen) < 2 else []) + [f'no #{c}' for c in missing]
    print(f'{path}: {w}x{h}, {len(seen)} colours' + (': ' + '; '.join(problems) if problems else ''))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
