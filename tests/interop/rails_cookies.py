#!/usr/bin/env python3
"""An independent implementation of Rails Campfire's cookies, written from
spec/03-auth-and-crypto.md (§2 key derivation, §3 verifier format, §4 cookies) with
Python's `cryptography` package, hashlib and hmac. tests/crypto_interop.rs uses it to
check the cookies campfire-room issues, and to issue cookies campfire-room must read.

  rails_cookies.py verify --secret S --token T --session-json J --now-ms N SET-COOKIE...
      Checks each Set-Cookie header value (session_token and _campfire_session): attributes,
      form-encoding, signature / AEAD tag, envelope purpose and expiry, and that the
      payloads are token T and session hash J. Prints "ok" or exits 1 with the reason.
  rails_cookies.py issue --secret S --token T --session-json J --exp ISO
      Prints two lines: the form-encoded session_token and _campfire_session cookie values.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import urllib.parse
from datetime import datetime, timezone

try:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
except ImportError:
    sys.stderr.write("rails_cookies.py: the Python 'cryptography' package is missing "
                     "(pip install cryptography)\n")
    sys.exit(3)


def derive(secret, salt, length):
    # Rails' key generator: PBKDF2-HMAC-SHA256, 1000 iterations, secret used as a string.
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt.encode(), 1000, length)


def fail(msg):
    sys.stderr.write("interop: " + msg + "\n")
    sys.exit(1)


def rails_json(value):
    # Rails' encoder: no spaces, <>& escaped; the MAC covers whatever bytes we produce.
    s = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def iso_ms(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def legacy_envelope(serialized, exp, purpose):
    inner = base64.b64encode(serialized).decode()
    return rails_json({"_rails": {"message": inner, "exp": exp, "pur": purpose}}).encode()


def open_envelope(payload, purpose, now):
    env = json.loads(payload)
    if not (isinstance(env, dict) and list(env.keys()) == ["_rails"]):
        fail("payload is not a metadata envelope: %r" % payload[:80])
    meta = env["_rails"]
    if meta.get("pur") != purpose:
        fail("purpose %r != %r" % (meta.get("pur"), purpose))
    exp = meta.get("exp")
    if exp is None:
        fail("no expiry in %r" % meta)
    exp_t = datetime.strptime(exp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    if now >= exp_t:
        fail("expired: %s" % exp)
    if "message" not in meta:
        fail("not a legacy (dual-serialized) envelope: %r" % meta)
    return base64.b64decode(meta["message"], validate=True), exp_t


def parse_set_cookie(header):
    parts = header.split("; ")
    name, _, value = parts[0].partition("=")
    return name, value, parts[1:]


def check_attributes(name, attrs, exp_t):
    # Rack 3.2: path, expires, [secure], httponly, samesite=lax, in that order.
    expected_expires = exp_t.strftime("%a, %d %b %Y %H:%M:%S GMT")
    want = ["path=/", "expires=" + expected_expires, "secure", "httponly", "samesite=lax"]
    if attrs != want:
        fail("%s attributes %r != %r" % (name, attrs, want))


def verify(args):
    now = datetime.fromtimestamp(args.now_ms / 1000, tz=timezone.utc)
    signed_key = derive(args.secret, "signed cookie", 64)
    gcm_key = derive(args.secret, "authenticated encrypted cookie", 32)
    seen = set()
    for header in args.set_cookie:
        name, escaped, attrs = parse_set_cookie(header)
        for ch in "+/=":
            if ch in escaped:
                fail("%s value is not form-encoded (contains %r)" % (name, ch))
        value = urllib.parse.unquote_plus(escaped)
        if name == "session_token":
            data, _, digest = value.rpartition("--")
            good = hmac.new(signed_key, data.encode(), hashlib.sha1).hexdigest()
            if not hmac.compare_digest(good, digest):
                fail("session_token HMAC-SHA1 mismatch")
            payload = base64.b64decode(data, validate=True)
            message, exp_t = open_envelope(payload, "cookie.session_token", now)
            token = json.loads(message)
            if token != args.token:
                fail("session_token carries %r, expected %r" % (token, args.token))
        elif name == "_campfire_session":
            parts = value.split("--")
            if len(parts) != 3:
                fail("_campfire_session has %d parts" % len(parts))
            ct, iv, tag = (base64.b64decode(p, validate=True) for p in parts)
            if len(iv) != 12 or len(tag) != 16:
                fail("iv/tag lengths %d/%d" % (len(iv), len(tag)))
            plain = AESGCM(gcm_key).decrypt(iv, ct + tag, None)
            message, exp_t = open_envelope(plain, "cookie._campfire_session", now)
            session = json.loads(message)
            if session != json.loads(args.session_json):
                fail("session hash %r != %r" % (session, json.loads(args.session_json)))
        else:
            fail("unexpected cookie %r" % name)
        years = exp_t.year - now.year
        if years != 20 or (exp_t.month, exp_t.day) != (now.month, now.day):
            fail("%s expires %s, not 20 years after %s" % (name, exp_t, now))
        check_attributes(name, attrs, exp_t)
        seen.add(name)
    if seen != {"session_token", "_campfire_session"}:
        fail("cookies seen: %r" % sorted(seen))
    print("ok")


def issue(args):
    signed_key = derive(args.secret, "signed cookie", 64)
    gcm_key = derive(args.secret, "authenticated encrypted cookie", 32)
    envelope = legacy_envelope(rails_json(args.token).encode(), args.exp, "cookie.session_token")
    data = base64.b64encode(envelope).decode()
    digest = hmac.new(signed_key, data.encode(), hashlib.sha1).hexdigest()
    print(urllib.parse.quote_plus(data + "--" + digest, safe="*-._"))

    envelope = legacy_envelope(rails_json(json.loads(args.session_json)).encode(), args.exp,
                               "cookie._campfire_session")
    iv = os.urandom(12)
    sealed = AESGCM(gcm_key).encrypt(iv, envelope, None)
    ct, tag = sealed[:-16], sealed[-16:]
    value = "--".join(base64.b64encode(p).decode() for p in (ct, iv, tag))
    print(urllib.parse.quote_plus(value, safe="*-._"))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--secret", required=True)
    v.add_argument("--token", required=True)
    v.add_argument("--session-json", required=True)
    v.add_argument("--now-ms", type=int, required=True)
    v.add_argument("set_cookie", nargs="+")
    i = sub.add_parser("issue")
    i.add_argument("--secret", required=True)
    i.add_argument("--token", required=True)
    i.add_argument("--session-json", required=True)
    i.add_argument("--exp", required=True)
    args = p.parse_args()
    verify(args) if args.cmd == "verify" else issue(args)


if __name__ == "__main__":
    main()
