#!/usr/bin/env python3
"""Writes the reference symbols src/qr_tests.rs compares our QR encoder against.

segno (pip install segno) is an independent ISO/IEC 18004 encoder. For each input and each
mask (and segno's own mask choice, "auto") it writes tests/data/qr/<name>.txt: a header line
"<mask> <version>" and one line of 0/1 per row. Run from the repository root.
"""
import segno
from segno import encoder

# segno appends a whole zero byte when the data already ends on a codeword boundary (always,
# in byte mode), where ISO/IEC 18004 §7.4.10 adds padding bits only to reach the boundary.
# Both decode the same; patch it so the symbols compare bit for bit.
encoder.write_padding_bits = lambda buff, version, length: buff.extend([0] * ((8 - length % 8) % 8))

INPUTS = {
    "example": b"http://example.com",
    # As long as a real transfer link: origin + /session/transfers/ + a signed id.
    "transfer": b"https://chat.example.com/session/transfers/" + b"eyJfcmFpbHMiOnsiZGF0YSI6MSwiZXhwIjoiMjAyNi0xMS0zMFQwMzoxMjowNS4wMDBaIiwicHVyIjoiVXNlclxudHJhbnNmZXJcbjE0NDAwcyJ9fQ==--0123456789abcdef0123456789abcdef01234567",
    "v20": bytes(range(256)) + b"x" * 100,
    "empty": b"",
}

for name, data in INPUTS.items():
    with open(f"tests/data/qr/{name}.txt", "w") as f:
        for mask in list(range(8)) + [None]:
            q = segno.make_qr(data, error="h", boost_error=False, mode="byte", mask=mask)
            f.write(f"{'auto' if mask is None else mask} {q.version}\n")
            for row in q.matrix:
                f.write("".join("1" if m else "0" for m in row) + "\n")
