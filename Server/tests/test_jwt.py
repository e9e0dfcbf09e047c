"""JSON Web Tokens as bearer tokens: --jwt-secret (HS256), --jwks (RS256 and ES256 by kid),
--jwt-audience; exp, nbf (60 s of skew), aud, alg and kid checks; a --tokens user and a JWT sub
of the same name are one user. Tokens are signed here with the `cryptography` package."""

import base64
import hashlib
import hmac
import json
import subprocess
import time

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from conftest import Client, http, mutation, put, server_binary

AUDIENCE = "optimist-tests"
SECRET = b"a shared secret of well over thirty-two bytes"

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY_1 = ec.generate_private_key(ec.SECP256R1())
EC_KEY_2 = ec.generate_private_key(ec.SECP256R1())
OTHER_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def int_bytes(n, length=None):
    return n.to_bytes(length or (n.bit_length() + 7) // 8, "big")


def jwk_of(key, kid):
    pub = key.public_key()
    if isinstance(key, rsa.RSAPrivateKey):
        nums = pub.public_numbers()
        return {"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": b64(int_bytes(nums.n)), "e": b64(int_bytes(nums.e))}
    nums = pub.public_numbers()
    return {"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(int_bytes(nums.x, 32)), "y": b64(int_bytes(nums.y, 32))}


def token(claims, key=None, alg=None, kid=None, header=None, signature=None):
    """A JWT of `claims` signed with `key` (an RSA or EC private key, bytes for HS256, None: unsigned)."""
    h = {"typ": "JWT", "alg": alg or ("RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256" if key is not None and not isinstance(key, bytes) else "HS256")}
    if kid is not None:
        h["kid"] = kid
    h.update(header or {})
    signing_input = (b64(json.dumps(h).encode()) + "." + b64(json.dumps(claims).encode())).encode()
    if signature is not None:
        sig = signature
    elif key is None:
        sig = b""
    elif isinstance(key, bytes):
        sig = hmac.new(key, signing_input, hashlib.sha256).digest()
    elif isinstance(key, rsa.RSAPrivateKey):
        sig = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        sig = int_bytes(r, 32) + int_bytes(s, 32)
    return signing_input.decode() + "." + b64(sig)


def claims(sub="alice", **extra):
    c = {"sub": sub, "exp": int(time.time()) + 600, "aud": AUDIENCE}
    c.update(extra)
    return {k: v for k, v in c.items() if v is not None}


def pull_status(srv, tok):
    r = http("POST", srv.url + "/pull", {"protocol": 1, "client_id": "c", "cursor": None, "unacked": []},
             {"Authorization": f"Bearer {tok}"})
    return r.status, (r.json or {}).get("error", "")


@pytest.fixture
def jwks_server(start_server, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk_of(RSA_KEY, "rsa-1"), jwk_of(EC_KEY_1, "ec-1"), jwk_of(EC_KEY_2, "ec-2"),
                                         {"kty": "oct", "kid": "sym", "k": b64(b"ignored")}]}))
    return start_server("--jwks", str(path), "--jwt-audience", AUDIENCE)


@pytest.fixture
def secret_server(start_server, tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET + b"\n")  # one trailing newline is not part of the secret
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok-alice": "alice"}))
    return start_server("--jwt-secret", str(secret), "--tokens", str(tokens))


def test_valid_tokens_of_each_key_are_accepted_and_name_the_user(jwks_server):
    for key, kid in ((RSA_KEY, "rsa-1"), (EC_KEY_1, "ec-1"), (EC_KEY_2, "ec-2")):
        assert pull_status(jwks_server, token(claims(), key, kid=kid)) == (200, "")
    alice = Client(jwks_server, token=token(claims("alice"), RSA_KEY, kid="rsa-1"))
    alice.push([mutation(1, put("notes", "n", {"by": "alice"}))])
    # Rotation: the same user under the second EC key sees what the first key's token wrote.
    assert Client(jwks_server, token=token(claims("alice"), EC_KEY_2, kid="ec-2")).state() == {("notes", "n"): {"by": "alice"}}
    assert Client(jwks_server, token=token(claims("bob"), EC_KEY_1, kid="ec-1")).state() == {}


@pytest.mark.parametrize("make, reason", [
    (lambda: token(claims(exp=int(time.time()) - 5), RSA_KEY, kid="rsa-1"), "expired"),
    (lambda: token(claims(exp=None), RSA_KEY, kid="rsa-1"), "no exp"),
    (lambda: token(claims(sub=None), RSA_KEY, kid="rsa-1"), "no sub"),
    (lambda: token(claims(sub=""), RSA_KEY, kid="rsa-1"), "no sub"),
    (lambda: token(claims(nbf=int(time.time()) + 600), RSA_KEY, kid="rsa-1"), "not valid yet"),
    (lambda: token(claims(aud="someone-else"), RSA_KEY, kid="rsa-1"), "audience"),
    (lambda: token(claims(aud=["a", "b"]), RSA_KEY, kid="rsa-1"), "audience"),
    (lambda: token(claims(aud=None), RSA_KEY, kid="rsa-1"), "audience"),
    (lambda: token(claims(), OTHER_RSA_KEY, kid="rsa-1"), "signature"),
    (lambda: token(claims(), EC_KEY_2, kid="ec-1"), "signature"),
    (lambda: token(claims(), RSA_KEY, kid="rsa-1", signature=b"\0" * 256), "signature"),
    (lambda: token(claims(), None, alg="none", kid="rsa-1"), "not accepted"),
    (lambda: token(claims(), None, alg="none"), "not accepted"),
    (lambda: token(claims(), RSA_KEY, alg="PS256", kid="rsa-1"), "not accepted"),
    (lambda: token(claims(), RSA_KEY, kid="nobody"), "no key with the token's kid"),
    (lambda: token(claims(), RSA_KEY), "several keys"),
    (lambda: token(claims(), EC_KEY_1, kid="rsa-1"), "not the algorithm"),
    # Algorithm confusion: HS256 "signed" with the RSA key's public bytes, naming the RSA key.
    (lambda: token(claims(), RSA_KEY.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
                   alg="HS256", kid="rsa-1"), "not the algorithm"),
    (lambda: token(claims(), RSA_KEY, kid="rsa-1", header={"crit": ["exp"]}), "crit"),
    (lambda: "not.a.jwt!", "base64url"),
    (lambda: "a.b", "three base64url parts"),
    (lambda: token(claims(), RSA_KEY, kid="rsa-1").rsplit(".", 1)[0] + ".", "no signature"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_refused_tokens_are_401_and_say_why(jwks_server, make, reason):
    status, error = pull_status(jwks_server, make())
    assert status == 401
    assert error.startswith("unauthorized:") and reason in error, error
    # Nothing of the token's reaches the answer.
    assert "eyJ" not in error


def test_tampered_payload_is_refused(jwks_server):
    good = token(claims("alice"), RSA_KEY, kid="rsa-1")
    h, _, s = good.split(".")
    forged = h + "." + b64(json.dumps(claims("mallory")).encode()) + "." + s
    assert pull_status(jwks_server, forged)[0] == 401


def test_nbf_within_the_clock_skew_and_aud_lists_are_accepted(jwks_server):
    assert pull_status(jwks_server, token(claims(nbf=int(time.time()) + 30), RSA_KEY, kid="rsa-1")) == (200, "")
    assert pull_status(jwks_server, token(claims(aud=["other", AUDIENCE]), EC_KEY_1, kid="ec-1")) == (200, "")


def test_secret_tokens_and_the_tokens_file_name_one_user(secret_server):
    # One key: a token without kid is accepted; the file's trailing newline is not in the secret.
    jwt_alice = token(claims("alice", aud=None), SECRET)
    assert pull_status(secret_server, jwt_alice) == (200, "")
    assert pull_status(secret_server, token(claims("alice", aud=None), SECRET + b"\n"))[0] == 401
    # No --jwt-audience: aud is not checked.
    assert pull_status(secret_server, token(claims("alice", aud="anything"), SECRET)) == (200, "")
    Client(secret_server, token="tok-alice").push([mutation(1, put("notes", "n", {"by": "file token"}))])
    assert Client(secret_server, token=jwt_alice).state() == {("notes", "n"): {"by": "file token"}}
    assert pull_status(secret_server, "tok-nobody") == (401, "unauthorized: unknown bearer token")


def start_fails(db, *args):
    """Runs the server with `args`; returns what it printed on failing to start."""
    p = subprocess.run([server_binary(), "--port", "0", "--db", db.url, *args], capture_output=True, timeout=60)
    assert p.returncode != 0, p
    return (p.stdout + p.stderr).decode("utf-8", "replace")


def test_bad_key_files_stop_the_server_with_a_reason(db, tmp_path):
    short = tmp_path / "short"
    short.write_bytes(b"too short\n")
    assert "at least 32" in start_fails(db, "--jwt-secret", str(short))
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"keys": [{"kty": "oct", "k": "AAAA"}]}))
    assert "no RS256 or ES256 signing key" in start_fails(db, "--jwks", str(empty))
    no_kids = tmp_path / "nokids.json"
    no_kids.write_text(json.dumps({"keys": [{k: v for k, v in jwk_of(EC_KEY_1, "x").items() if k != "kid"},
                                            {k: v for k, v in jwk_of(EC_KEY_2, "y").items() if k != "kid"}]}))
    assert "every key needs a \"kid\"" in start_fails(db, "--jwks", str(no_kids))
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps({"keys": [jwk_of(EC_KEY_1, "same"), jwk_of(EC_KEY_2, "same")]}))
    assert "two keys with kid" in start_fails(db, "--jwks", str(dup))
    small = tmp_path / "small.json"
    small_key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    small.write_text(json.dumps({"keys": [jwk_of(small_key, "small")]}))
    assert "2048 bits" in start_fails(db, "--jwks", str(small))
    assert "cannot read" in start_fails(db, "--jwks", str(tmp_path / "missing.json"))
    assert "needs --jwt-secret or --jwks" in start_fails(db, "--jwt-audience", "x")
