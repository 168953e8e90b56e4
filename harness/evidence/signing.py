"""Ed25519 signatures of an evidence pack's manifest (``manifest.sig``), through the ``cryptography`` package.

``cryptography`` is the ``evidence`` extra: it is imported only here and only when a key is made, a manifest
signed or a signature checked, so a base or ``[certify]`` install starts without it and an unsigned pack needs it
nowhere. Keys are PEM files: the private key PKCS#8 unencrypted (mode 0600), the public key SubjectPublicKeyInfo.

``manifest.sig`` is JSON: ``algorithm`` (``ed25519``), ``public_key`` (the raw 32 bytes, base64), ``key_id`` (the
SHA-256 of those bytes) and ``signature`` (base64 of the 64-byte signature over ``manifest.json``'s bytes).
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import InputError, require_extra
from harness.evidence.digest import sha256_bytes

EVIDENCE_EXTRA = {"cryptography": "cryptography"}
ALGORITHM = "ed25519"
SIGNATURE_FILE = "manifest.sig"


class KeyFileError(InputError):
    """A key file that is missing, unreadable or not an Ed25519 key of the kind expected (the message names it)."""


def _serialization(command: str) -> Any:
    require_extra("evidence", EVIDENCE_EXTRA, command)
    from cryptography.hazmat.primitives import serialization

    return serialization


def _ed25519(command: str) -> Any:
    require_extra("evidence", EVIDENCE_EXTRA, command)
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519


def keygen(path: Path, command: str = "xocdia-hil evidence keygen") -> tuple[Path, str]:
    """Write a new Ed25519 private key to ``path`` (mode 0600) and its public key to ``path.pub``; returns the
    public key's path and its key id. Neither file may exist yet.

    Raises:
        MissingExtra: ``cryptography`` is not installed (the ``evidence`` extra).
        KeyFileError: either file exists, or the folder cannot be written.
    """
    ed25519, serialization = _ed25519(command), _serialization(command)
    public_path = path.with_name(path.name + ".pub")
    for target in (path, public_path):
        if target.exists():
            raise KeyFileError(f"{target}: exists already; a key is never overwritten (choose another name)")
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key()
    public_pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(private_pem)
        os.chmod(path, 0o600)
        public_path.write_bytes(public_pem)
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot write the key ({exc.strerror})") from None
    return public_path, key_id(_raw_public(public, serialization))


def key_id(raw_public: bytes) -> str:
    """The id of a public key: the SHA-256 of its raw 32 bytes."""
    return sha256_bytes(raw_public)


def _raw_public(public: Any, serialization: Any) -> bytes:
    raw: bytes = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def load_private_key(path: Path, command: str = "xocdia-hil certify --sign-key") -> Any:
    """The Ed25519 private key in the PEM file ``path``.

    Raises:
        MissingExtra: ``cryptography`` is not installed.
        KeyFileError: the file is missing, unreadable, or not an unencrypted Ed25519 private key.
    """
    ed25519, serialization = _ed25519(command), _serialization(command)
    data = _read(path, "private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 key (xocdia-hil evidence keygen writes one)")
    return key


def load_public_key(path: Path, command: str = "xocdia-hil verify --key") -> bytes:
    """The raw 32 bytes of the Ed25519 public key in the PEM file ``path``.

    Raises:
        MissingExtra: ``cryptography`` is not installed.
        KeyFileError: the file is missing, unreadable, or not an Ed25519 public key.
    """
    ed25519, serialization = _ed25519(command), _serialization(command)
    data = _read(path, "public key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{path}: not a PEM public key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise KeyFileError(f"{path}: not an Ed25519 public key (the .pub file xocdia-hil evidence keygen writes)")
    return _raw_public(key, serialization)


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the {what} ({exc.strerror})") from None


def sign(key: Any, data: bytes) -> bytes:
    """``manifest.sig``'s bytes for ``data`` signed with ``key`` (from :func:`load_private_key`)."""
    serialization = _serialization("signing")
    raw = _raw_public(key.public_key(), serialization)
    doc = {
        "algorithm": ALGORITHM,
        "public_key": base64.b64encode(raw).decode("ascii"),
        "key_id": key_id(raw),
        "signature": base64.b64encode(key.sign(data)).decode("ascii"),
    }
    return (json.dumps(doc, indent=2) + "\n").encode("utf-8")


@dataclass(frozen=True)
class SignatureCheck:
    """What :func:`check_signature` found: ``ok``, the key id the signature names, whether that key is the one
    the verifier trusts (``trusted``: None when no key was given), and the problem when not ok."""

    ok: bool
    key_id: str
    trusted: bool | None
    problem: str = ""


def check_signature(
    sig: bytes, data: bytes, trusted_raw: bytes | None, command: str = "xocdia-hil verify"
) -> SignatureCheck:
    """Check ``manifest.sig``'s bytes ``sig`` over ``data``: the signature is valid for the public key it names,
    and (given ``trusted_raw``) that key is the trusted one. Never raises for bad content.

    Raises:
        MissingExtra: ``cryptography`` is not installed.
    """
    ed25519 = _ed25519(command)
    from cryptography.exceptions import InvalidSignature

    try:
        doc = json.loads(sig)
        if not isinstance(doc, dict) or doc.get("algorithm") != ALGORITHM:
            return SignatureCheck(False, "", None, f"{SIGNATURE_FILE}: not an {ALGORITHM} signature")
        raw = base64.b64decode(str(doc["public_key"]), validate=True)
        signature = base64.b64decode(str(doc["signature"]), validate=True)
        public = ed25519.Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, KeyError, TypeError) as exc:
        return SignatureCheck(False, "", None, f"{SIGNATURE_FILE}: unreadable ({exc})")
    kid = key_id(raw)
    trusted = None if trusted_raw is None else raw == trusted_raw
    try:
        public.verify(signature, data)
    except InvalidSignature:
        return SignatureCheck(False, kid, trusted, "manifest.json: the signature does not match its bytes")
    if trusted is False:
        return SignatureCheck(
            False, kid, trusted, f"{SIGNATURE_FILE}: signed by key {kid}, not by the key given (--key)"
        )
    return SignatureCheck(True, kid, trusted)
