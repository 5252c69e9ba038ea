#!/usr/bin/env python3
"""Writes and reads values through Valkey GLIDE with compression on, for
zipline's live interoperability test (interop_test.go). It runs only against
the loopback server the Go test started.

usage: glide_interop.py {write|read} --port N --backend {zstd|lz4} --manifest FILE

The manifest is JSON: {"cases": [{"key": ..., "op": "set"|"mset"|"setex",
"value_hex": ...}]}. "write" stores each value with its op (SETEX through a
custom command, which GLIDE compresses like its typed SET). "read" reads each
back with the matching read (GET, MGET, GETEX), compares it with value_hex,
and exits 1 listing the mismatches.
"""
import argparse
import asyncio
import json
import sys

from glide import (
    CompressionBackend,
    CompressionConfiguration,
    ExpiryGetEx,
    ExpirySet,
    ExpiryType,
    ExpiryTypeGetEx,
    GlideClient,
    GlideClientConfiguration,
    NodeAddress,
)


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["write", "read"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--backend", choices=["zstd", "lz4"], required=True)
    ap.add_argument("--manifest", required=True)
    args = ap.parse_args()

    with open(args.manifest) as f:
        cases = json.load(f)["cases"]
    backend = CompressionBackend.ZSTD if args.backend == "zstd" else CompressionBackend.LZ4
    config = GlideClientConfiguration(
        [NodeAddress("127.0.0.1", args.port)],
        compression=CompressionConfiguration(enabled=True, backend=backend),
    )
    client = await GlideClient.create(config)
    try:
        if args.mode == "write":
            for c in cases:
                value = bytes.fromhex(c["value_hex"])
                if c["op"] == "set":
                    await client.set(c["key"], value, expiry=ExpirySet(ExpiryType.SEC, 3600))
                elif c["op"] == "mset":
                    await client.mset({c["key"]: value})
                elif c["op"] == "setex":
                    await client.custom_command(["SETEX", c["key"], "3600", value])
                else:
                    raise ValueError(c["op"])
            return 0

        bad = []
        for c in cases:
            want = bytes.fromhex(c["value_hex"])
            if c["op"] == "set":
                got = await client.get(c["key"])
            elif c["op"] == "mset":
                got = (await client.mget([c["key"]]))[0]
            else:
                got = await client.getex(c["key"], ExpiryGetEx(ExpiryTypeGetEx.SEC, 3600))
            if got != want:
                bad.append({"key": c["key"], "want_len": len(want), "got_len": None if got is None else len(got)})
        print(json.dumps({"checked": len(cases), "mismatches": bad}))
        return 1 if bad else 0
    finally:
        await client.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
