#!/usr/bin/env python3
"""Decodes the QR codes a running campfire-room serves, with zxing-cpp (an independent decoder).

Usage: qr_decode.py http://127.0.0.1:PORT   (pip install zxing-cpp pillow)
For links of many lengths (a join link, transfer-link lengths, the 382-byte maximum), fetches
/qr_code/<base64url>, rasterizes the SVG path (M x y h n v1 h-n z runs) at 6 px per module and
checks that zxing reads back exactly the link. Exits non-zero on any mismatch.
"""
import base64, re, sys, urllib.request
import zxingcpp
from PIL import Image, ImageDraw

base = sys.argv[1]
links = [b"http://example.com", b"https://chat.example.com/join/AbC1-dEf2-GhI3"]
links += [b"https://campfire.example.com/session/transfers/" + b"eyJfcmFpbHMi-_0123456789="[: n % 26] * (n // 26 + 1) for n in range(40, 330, 7)]
links += [bytes(range(32, 127)) * 4 + b"z" * 2]  # 382 bytes: version 20
failures = 0
for link in links:
    link = link[:382]
    url = base + "/qr_code/" + base64.urlsafe_b64encode(link).decode().rstrip("=")
    svg = urllib.request.urlopen(url).read().decode()
    side = int(re.search(r'viewBox="0 0 (\d+) \d+"', svg).group(1))
    scale = 6
    img = Image.new("L", (side * scale, side * scale), 255)
    draw = ImageDraw.Draw(img)
    for x, y, n in re.findall(r"M(\d+) (\d+)h(\d+)v1h-\d+z", svg):
        x, y, n = int(x), int(y), int(n)
        draw.rectangle([x * scale, y * scale, (x + n) * scale - 1, (y + 1) * scale - 1], fill=0)
    found = zxingcpp.read_barcodes(img)
    got = found[0].bytes if found else None
    ok = got == link
    failures += not ok
    print(f"{'ok ' if ok else 'BAD'} {len(link):3} bytes, {side - 8} modules" + ("" if ok else f": {got!r}"))
sys.exit(1 if failures else 0)
