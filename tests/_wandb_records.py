"""Read what an offline wandb run logged, from its ``run-<id>.wandb`` file, without wandb's
service: the file is wandb's record log (a 7-byte header, then the LevelDB log layout of
32 KiB blocks whose records are checksum u32, length u16, kind u8 and a payload, split
FIRST/MIDDLE/LAST across blocks), and each payload is one ``wandb_internal_pb2.Record``."""

from __future__ import annotations

import json
import struct
from pathlib import Path

HEADER = 7  # b":W&B", magic u16, version u8
BLOCK = 32768
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def _payloads(raw: bytes) -> list[bytes]:
    assert raw[:4] == b":W&B", "not a wandb run file"
    out, pending, pos = [], b"", HEADER
    while pos + 7 <= len(raw):
        left = BLOCK - pos % BLOCK
        if left < 7:  # a block's tail too short for a record header is padding
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", raw[pos : pos + 7])
        if kind == 0:  # zero padding to the end of the block
            pos += left
            continue
        data, pos = raw[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind == FULL:
            out.append(data)
        elif kind == FIRST:
            pending = data
        elif kind == MIDDLE:
            pending += data
        elif kind == LAST:
            out.append(pending + data)
    return out


def logged(run_file: str | Path) -> tuple[list[dict], dict]:
    """``(history rows, summary)`` of an offline run file: each ``wandb.log`` call's items
    (wandb's own ``_step``, ``_runtime``, ``_timestamp`` removed) and the last summary value
    of each key."""
    from wandb.proto import wandb_internal_pb2 as pb

    history, summary = [], {}
    for payload in _payloads(Path(run_file).read_bytes()):
        record = pb.Record()
        record.ParseFromString(payload)
        kind = record.WhichOneof("record_type")
        if kind == "history":
            row = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
            history.append({k: v for k, v in row.items() if not k.startswith("_")})
        elif kind == "summary":
            for item in record.summary.update:
                summary[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    return history, summary
