"""One writer of tests/interop/test_concurrency.py, run as its own process.

    concurrency_worker.py ROLE OP DATASET ARG GO_FILE READY_FILE RESULT_FILE

ROLE is ``cpp`` (runs the lance-cpp CLI named by $LANCE_CPP_BIN) or ``py``
(pylance in this process). OP is ``delete`` (ARG: the id to delete),
``increment`` (``c = c + 1`` where ``id = ARG``) or ``append`` (ARG: an Arrow
IPC file). Everything slow (imports, interpreter start) happens before the
READY_FILE is written; the write itself starts when GO_FILE appears, so all
writers of a test start within a millisecond or two of each other. The
outcome goes to RESULT_FILE as JSON. Every wait is bounded.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback

BARRIER_TIMEOUT_S = 60
OP_TIMEOUT_S = 120


def main() -> int:
    role, op, dataset, arg, go_file, ready_file, result_file = sys.argv[1:8]
    if role == "py":
        os.environ.setdefault("LANCE_LOG", "error")
        import lance  # noqa: F401  (loaded before the barrier)
        import pyarrow as pa  # noqa: F401
    with open(ready_file, "w") as f:
        f.write("ready")
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            json.dump({"ok": False, "error": "barrier timed out"}, open(result_file, "w"))
            return 1
        time.sleep(0.0005)
    started = time.time()
    result = {"role": role, "op": op, "arg": arg, "started": started}
    try:
        if role == "cpp":
            binary = os.environ["LANCE_CPP_BIN"]
            if op == "delete":
                cmd = [binary, "delete", dataset, f"id = {arg}"]
            elif op == "increment":
                cmd = [binary, "update", dataset, "--set", "c=c + 1", "--where", f"id = {arg}"]
            else:
                cmd = [binary, "write", dataset, "--input", arg, "--mode", "append", "--quiet"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=OP_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
            result.update(ok=proc.returncode == 0, returncode=proc.returncode,
                          stdout=proc.stdout, stderr=proc.stderr)
        else:
            import lance
            import pyarrow as pa
            if op == "delete":
                lance.dataset(dataset).delete(f"id = {arg}")
            elif op == "increment":
                lance.dataset(dataset).update({"c": "c + 1"}, where=f"id = {arg}")
            else:
                with pa.memory_map(arg) as f:
                    table = pa.ipc.open_file(f).read_all()
                lance.write_dataset(table, dataset, mode="append")
            result.update(ok=True)
    except Exception:  # noqa: BLE001 - reported to the test
        result.update(ok=False, error=traceback.format_exc())
    result["finished"] = time.time()
    with open(result_file, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
