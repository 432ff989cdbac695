"""Signed packs: Ed25519 keys, pack.sig, and the trust decision.

    private, public = generate_keypair(Path("keys"))        # pack keygen
    sig = sign_manifest(manifest_bytes, load_private_key(private))   # pack export --sign
    trust = TrustedKeys.load([public], trust_dir)            # --trust / ENVFACTORY_PACKS__TRUST_DIR
    signer = check_signature(manifest_bytes, sig_bytes, trust, "envs.tar")

Invariants:
- the signature covers the exact bytes of pack.json (after a fixed context prefix);
  pack.json lists every member with its sha256, so one signature covers every byte;
- a signature that is present is always checked against the key it carries, trusted or
  not: a changed pack.json or pack.sig fails even without a trust list;
- with trust configured, an unsigned pack and a pack signed by a key outside the list are
  refused, naming the key's fingerprint; the decision compares public-key bytes, never
  names or fingerprints the pack supplies;
- every cryptographic operation is the `cryptography` package's (Ed25519); nothing here
  is hand-rolled. Private keys are written 0600 and refused when others can read them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import ValidationError

from envfactory.core.errors import ConfigError, InvalidInput, InvalidPack
from envfactory.core.models import PackSignature

#: Domain separation: a pack signature can never be replayed as a signature of anything else.
CONTEXT = b"envfactory pack manifest v1\n"
PRIVATE_NAME, PUBLIC_NAME = "pack-signing.key", "pack-signing.pub"
KEY_SUFFIXES = (".pub", ".pem")


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(raw_public: bytes) -> str:
    """`ed25519:` and the first 32 hex digits of the public key's sha256."""
    return "ed25519:" + hashlib.sha256(raw_public).hexdigest()[:32]


@dataclass(frozen=True)
class Signer:
    """Who signed a pack: the key's fingerprint, and whether a trust list vouched for it."""

    fingerprint: str
    trusted: bool


def generate_keypair(out_dir: Path) -> tuple[Path, Path, str]:
    """Write a new key pair into `out_dir`: (private key path, public key path, fingerprint).
    Refuses to overwrite; the private key is created 0600 (never briefly wider)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    private_path, public_path = out_dir / PRIVATE_NAME, out_dir / PUBLIC_NAME
    for p in (private_path, public_path):
        if p.exists():
            raise InvalidInput(f"{p}: already exists", hint="choose another --out folder")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    public = key.public_key()
    public_path.write_bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private_path, public_path, fingerprint(_raw(public))


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM file only its owner can read."""
    try:
        if path.stat().st_mode & 0o077:
            raise InvalidInput(
                f"{path}: private key is readable by other users", hint=f"chmod 600 {path}"
            )
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as e:
        raise InvalidInput(f"{path}: cannot read the signing key ({e.strerror})") from e
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise InvalidInput(
            f"{path}: not an unencrypted PEM private key ({e})",
            hint="make one with `envfactory pack keygen --out DIR`",
        ) from e
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidInput(f"{path}: not an Ed25519 key", hint="use `envfactory pack keygen`")
    return key


def load_public_key(path: Path) -> bytes:
    """The raw bytes of an Ed25519 public key file (PEM, or OpenSSH `ssh-ed25519 …`)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the public key ({e.strerror})") from e
    try:
        key = (
            serialization.load_ssh_public_key(data)
            if data.startswith(b"ssh-")
            else serialization.load_pem_public_key(data)
        )
    except (ValueError, UnsupportedAlgorithm) as e:
        raise ConfigError(
            f"{path}: not a PEM or OpenSSH public key ({e})",
            hint="use the pack-signing.pub that `pack keygen` wrote",
        ) from e
    if not isinstance(key, Ed25519PublicKey):
        raise ConfigError(f"{path}: not an Ed25519 public key", hint="use `envfactory pack keygen`")
    return _raw(key)


@dataclass(frozen=True)
class TrustedKeys:
    """The public keys a reader trusts, by fingerprint. None (no trust) is not the same
    as an empty list: an empty list is refused when loading."""

    keys: dict[str, bytes]

    @classmethod
    def load(cls, files: Sequence[Path] = (), trust_dir: Path | None = None) -> TrustedKeys | None:
        """Keys from `files` and from every *.pub / *.pem in `trust_dir`; None if neither
        is given (trust not configured)."""
        if not files and trust_dir is None:
            return None
        paths = list(files)
        if trust_dir is not None:
            paths += _dir_keys(trust_dir)
        raws = [load_public_key(p) for p in paths]
        return cls({fingerprint(r): r for r in raws})

    def listing(self) -> str:
        return ", ".join(sorted(self.keys))

    def trusts(self, raw_public: bytes) -> bool:
        return raw_public in self.keys.values()


def _dir_keys(trust_dir: Path) -> list[Path]:
    if not trust_dir.is_dir():
        raise ConfigError(
            f"{trust_dir}: the trust directory does not exist",
            hint="create it with the trusted pack-signing.pub files, or unset "
            "ENVFACTORY_PACKS__TRUST_DIR",
        )
    found = sorted(p for p in trust_dir.iterdir() if p.suffix in KEY_SUFFIXES and p.is_file())
    if not found:
        raise ConfigError(
            f"{trust_dir}: the trust directory holds no public keys (*.pub, *.pem)",
            hint="copy the exporter's pack-signing.pub into it",
        )
    return found


def sign_manifest(manifest: bytes, key: Ed25519PrivateKey) -> PackSignature:
    raw = _raw(key.public_key())
    return PackSignature(
        key_fingerprint=fingerprint(raw),
        public_key=base64.b64encode(raw).decode(),
        signature=base64.b64encode(key.sign(CONTEXT + manifest)).decode(),
    )


def _parse(sig: bytes, where: str) -> tuple[bytes, bytes]:
    """(raw public key, raw signature) from pack.sig bytes, or InvalidPack."""
    try:
        parsed = PackSignature.model_validate_json(sig)
        raw_public = base64.b64decode(parsed.public_key, validate=True)
        raw_sig = base64.b64decode(parsed.signature, validate=True)
    except (ValidationError, binascii.Error) as e:
        raise InvalidPack(
            f"{where}/pack.sig: not a valid pack signature ({str(e)[:200]})",
            hint="re-export the pack with `pack export --sign KEY`",
        ) from e
    if len(raw_public) != 32 or parsed.key_fingerprint != fingerprint(raw_public):
        raise InvalidPack(f"{where}/pack.sig: the key fingerprint does not match its key")
    return raw_public, raw_sig


def check_signature(
    manifest: bytes, sig: bytes | None, trust: TrustedKeys | None, where: str
) -> Signer | None:
    """Who signed `manifest`, or InvalidPack: a bad signature, or (with trust) an unsigned
    pack or a key outside the list. None for an unsigned pack when trust is not set."""
    if sig is None:
        if trust is not None:
            raise InvalidPack(
                f"{where}: the pack is not signed, and only packs signed by a "
                f"trusted key are accepted (trusted: {trust.listing()})",
                hint="ask its exporter for a signed pack (`pack export --sign KEY`)",
            )
        return None
    raw_public, raw_sig = _parse(sig, where)
    fp = fingerprint(raw_public)
    try:
        Ed25519PublicKey.from_public_bytes(raw_public).verify(raw_sig, CONTEXT + manifest)
    except InvalidSignature as e:
        raise InvalidPack(
            f"{where}: the signature (key {fp}) does not match pack.json: "
            "pack.json or pack.sig was changed after signing",
            hint="get the pack again from its exporter; do not edit a pack",
        ) from e
    if trust is not None and not trust.trusts(raw_public):
        raise InvalidPack(
            f"{where}: signed by key {fp}, which is not trusted (trusted: {trust.listing()})",
            hint="if you trust its exporter, add their public key with --trust "
            "FILE or to the trust directory",
        )
    return Signer(fp, trusted=trust is not None)
