"""Manifest and transaction files decoded without lance-cpp's parser.

The bytes are split by hand (the manifest file layout, table-format-notes.md
section 2) and each protobuf message is decoded by `protoc --decode` against
the repository's .proto files into text format, which is parsed here into
plain dicts. protoc prints fields our .proto files do not declare by their
numbers, so nothing on the wire is hidden from a comparison.

A decoded message is a dict: field name (or number) -> list of values, in
wire order; a value is an int, float, str (enums), bytes (strings and bytes
fields), or a nested dict.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any, Optional

REPO_ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = REPO_ROOT / "proto"
FOOTER_SIZE = 16
MAGIC = b"LANC"

_OPEN_RE = re.compile(r"^(\w+) \{$")
_FIELD_RE = re.compile(r"^(\w+): (.*)$")
_SIMPLE_ESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "'": b"'", "\\": b"\\"}


def protoc() -> Optional[str]:
    return shutil.which("protoc")


def _include_dirs() -> list[str]:
    """Our protos import google/protobuf/*.proto, which protoc finds in the
    include directory beside it (Debian: /usr/include)."""
    out = ["-I" + str(PROTO_DIR)]
    exe = protoc()
    if exe:
        inc = Path(exe).resolve().parent.parent / "include"
        if (inc / "google" / "protobuf" / "timestamp.proto").exists():
            out.append("-I" + str(inc))
    return out


def _unescape(s: str) -> bytes:
    """protoc's text-format string: C escapes, octal for the rest."""
    assert s.startswith('"') and s.endswith('"'), s
    body = s[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        n = body[i + 1]
        if n in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[n]
            i += 2
        elif n in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8))
            i = j
        elif n == "x":
            j = i + 2
            while j < len(body) and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16))
            i = j
        else:
            raise ValueError(f"unknown escape \\{n} in {s}")
    return bytes(out)


def _scalar(text: str) -> Any:
    if text.startswith('"'):
        return _unescape(text)
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text, 16)
    try:
        return float(text)
    except ValueError:
        return text  # an enum name, true/false


def parse_text_format(text: str) -> dict:
    root: dict = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        m = _OPEN_RE.match(line)
        if m:
            child: dict = {}
            stack[-1].setdefault(m.group(1), []).append(child)
            stack.append(child)
            continue
        m = _FIELD_RE.match(line)
        if not m:
            raise ValueError(f"unparsed protoc output line: {raw!r}")
        stack[-1].setdefault(m.group(1), []).append(_scalar(m.group(2)))
    assert len(stack) == 1, "unbalanced protoc output"
    return root


def decode(message_type: str, proto_file: str, data: bytes) -> dict:
    """`data` as a `lance.pb.table.<message_type>` message."""
    exe = protoc()
    assert exe, "protoc not found"
    proc = subprocess.run([exe, f"--decode=lance.pb.table.{message_type}", *_include_dirs(),
                           f"lance/{proto_file}"], input=data, capture_output=True, timeout=60)
    if proc.returncode != 0:
        raise ValueError(f"protoc could not decode a {message_type}: {proc.stderr.decode()}")
    return parse_text_format(proc.stdout.decode("utf-8"))


def _message_at(data: bytes, offset: int, limit: int, what: str) -> bytes:
    assert 0 <= offset and offset + 4 <= limit, f"{what} offset {offset} outside the body"
    (n,) = struct.unpack_from("<I", data, offset)
    assert offset + 4 + n <= limit, f"{what} overruns the body"
    return data[offset + 4: offset + 4 + n]


def read_manifest_file(path: Path) -> dict:
    """{'manifest': dict, 'transaction': dict | None, 'index_section': dict | None,
    'footer': (major, minor)}: a manifest file's three messages and footer."""
    data = Path(path).read_bytes()
    assert len(data) >= FOOTER_SIZE and data[-4:] == MAGIC, f"{path}: not a manifest file"
    pos, major, minor = struct.unpack_from("<qhh", data, len(data) - FOOTER_SIZE)
    body = len(data) - FOOTER_SIZE
    (n,) = struct.unpack_from("<I", data, pos)
    assert pos + 4 + n == body, f"{path}: the manifest message must end at the footer"
    manifest = decode("Manifest", "table.proto", data[pos + 4: body])
    out = {"manifest": manifest, "transaction": None, "index_section": None, "footer": (major, minor)}
    if "transaction_section" in manifest:
        out["transaction"] = decode("Transaction", "transaction.proto",
                                    _message_at(data, manifest["transaction_section"][0], pos,
                                                "transaction section"))
    if "index_section" in manifest:
        out["index_section"] = decode("IndexSection", "table.proto",
                                      _message_at(data, manifest["index_section"][0], pos,
                                                  "index section"))
    return out


def read_transaction_file(path: Path) -> dict:
    """A `_transactions/*.txn` file: a bare Transaction message."""
    return decode("Transaction", "transaction.proto", Path(path).read_bytes())


def manifest_path(uri: Path, version: int) -> Path:
    """Version `version`'s manifest under either naming scheme."""
    v2 = Path(uri) / "_versions" / f"{(2**64 - 1) - version:020d}.manifest"
    v1 = Path(uri) / "_versions" / f"{version}.manifest"
    found = [p for p in (v2, v1) if p.exists()]
    assert len(found) == 1, f"version {version} of {uri}: {found}"
    return found[0]


def patch_varint_field(manifest: Path, field: int, value: int) -> None:
    """Appends varint field `field` = `value` to the Manifest message of a
    manifest file (e.g. 9: reader, 10: writer feature flags); protobuf lets
    the last value of a field win, so this overrides the written one."""
    b = bytearray(manifest.read_bytes())
    pos = struct.unpack_from("<q", b, len(b) - 16)[0]
    (length,) = struct.unpack_from("<I", b, pos)
    varint, v = bytearray(), value
    while True:
        byte = v & 0x7F
        v >>= 7
        varint.append(byte | (0x80 if v else 0))
        if not v:
            break
    extra = bytes([field << 3]) + bytes(varint)
    end = pos + 4 + length
    b[end:end] = extra
    struct.pack_into("<I", b, pos, length + len(extra))
    manifest.write_bytes(bytes(b))
