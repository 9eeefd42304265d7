"""s3:// datasets against a local moto server (docs/object-storage.md, issue 17).

lance-cpp and pylance read and write the same datasets in the same bucket:
each side's writes are read back by the other, writers of both race on one
dataset through S3's conditional PUT (If-None-Match: *), and one run goes
against a moto that checks request signatures. moto_server is started here
(a free port, killed at the end), so a fresh clone needs nothing else.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import lance

from conftest import lance_cpp_binary

boto3 = pytest.importorskip("boto3")

MOTO_SERVER = Path(sys.executable).with_name("moto_server")
WORKER = Path(__file__).with_name("concurrency_worker.py")
REGION = "us-east-1"
TIMEOUT_S = 60
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # moto colours the status of failed requests


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _clean_env(**extra: str) -> dict:
    """The test process's environment without AWS settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(extra)
    return env


class Moto:
    def __init__(self, log: Path, **env: str):
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = log
        with open(log, "w") as out:
            self.proc = subprocess.Popen(
                [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=_clean_env(**env))
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1)
                break
            except Exception:  # noqa: BLE001 - not up yet
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"moto_server did not start:\n{log.read_text()}")
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def requests(self) -> list[tuple[str, str, int]]:
        """(method, path, status) of every request moto logged."""
        out = []
        for line in self.log.read_text().splitlines():
            parts = ANSI.sub("", line).split('"')
            if len(parts) < 3:
                continue
            request, status = parts[1].split(), parts[2].split()
            if len(request) == 3 and status and status[0].isdigit():
                out.append((request[0], request[1], int(status[0])))
        return out

    def client(self, key: str = "x", secret: str = "x"):
        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=key, aws_secret_access_key=secret)


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = Moto(tmp_path_factory.mktemp("moto") / "moto.log")
    yield server
    server.stop()


@pytest.fixture
def bucket(moto) -> str:
    name = "t" + uuid.uuid4().hex[:16]
    moto.client().create_bucket(Bucket=name)
    return name


def _options(moto: Moto, key: str = "x", secret: str = "x") -> dict:
    return {"aws_endpoint": moto.endpoint, "allow_http": "true", "aws_region": REGION,
            "aws_access_key_id": key, "aws_secret_access_key": secret}


def _flags(options: dict) -> list[str]:
    out = []
    for k, v in options.items():
        out += ["--storage-option", f"{k}={v}"]
    return out


def cli(*args, options: dict | None = None, env: dict | None = None, check: bool = True):
    cmd = [str(lance_cpp_binary())] + [str(a) for a in args] + _flags(options or {})
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S,
                          stdin=subprocess.DEVNULL, env=env or _clean_env())
    if check and proc.returncode != 0:
        pytest.fail(f"lance-cpp failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}", pytrace=False)
    return proc


def _ipc(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    return path


def _rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": pa.array([f"n{i}" for i in range(start, start + n)])})


def _keys(moto: Moto, bucket: str) -> list[str]:
    pages = moto.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return sorted(o["Key"] for p in pages for o in p.get("Contents", []))


def test_lance_cpp_writes_pylance_reads(moto, bucket, tmp_path):
    uri = f"s3://{bucket}/a/ds"
    opts = _options(moto)
    cli("write", uri, "--input", _ipc(tmp_path / "a.arrow", _rows(0, 100)), "--quiet", options=opts)
    cli("write", uri, "--input", _ipc(tmp_path / "b.arrow", _rows(100, 50)), "--mode", "append", "--quiet",
        options=opts)
    cli("delete", uri, "id < 10", "--quiet", options=opts)
    ds = lance.dataset(uri, storage_options=opts)
    assert ds.version == 3
    assert [v["version"] for v in ds.versions()] == [1, 2, 3]
    table = ds.to_table().sort_by("id")
    assert table.column("id").to_pylist() == list(range(10, 150))
    assert table.schema.field("name").type == pa.string()
    keys = _keys(moto, bucket)
    # No directory marker objects, no version hint (pylance writes none on S3),
    # V2 manifest names.
    assert not [k for k in keys if k.endswith("/")], keys
    assert not [k for k in keys if "latest_version_hint" in k], keys
    assert f"a/ds/_versions/{2**64 - 1 - 3:020d}.manifest" in keys
    assert cli("count", uri, options=opts).stdout.strip() == "140"


def test_pylance_writes_lance_cpp_reads_and_modifies(moto, bucket, tmp_path):
    uri = f"s3://{bucket}/ds"
    opts = _options(moto)
    lance.write_dataset(_rows(0, 20), uri, storage_options=opts)
    lance.write_dataset(_rows(20, 20), uri, mode="append", storage_options=opts)
    lance.dataset(uri, storage_options=opts).delete("id % 2 = 1")
    assert cli("count", uri, options=opts).stdout.strip() == "20"
    scanned = cli("scan", uri, "--columns", "id", "--format", "json", options=opts).stdout.splitlines()
    assert sorted(json.loads(line)["id"] for line in scanned) == list(range(0, 40, 2))
    cli("update", uri, "--set", "name='x'", "--where", "id < 4", "--quiet", options=opts)
    cli("write", uri, "--input", _ipc(tmp_path / "c.arrow", _rows(100, 5)), "--mode", "append", "--quiet",
        options=opts)
    ds = lance.dataset(uri, storage_options=opts)
    assert ds.version == 5
    table = ds.to_table().sort_by("id")
    assert table.column("id").to_pylist() == list(range(0, 40, 2)) + list(range(100, 105))
    assert table.column("name").to_pylist()[:3] == ["x", "x", "n4"]


def test_racing_appends_of_both_end_at_version_7(moto, bucket, tmp_path):
    uri = f"s3://{bucket}/race"
    opts = _options(moto)
    lance.write_dataset(_rows(0, 1), uri, storage_options=opts)
    # The workers take their configuration from the environment, as both do.
    env = _clean_env(AWS_ENDPOINT=moto.endpoint, AWS_ALLOW_HTTP="true", AWS_REGION=REGION,
                     AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x",
                     LANCE_CPP_BIN=str(lance_cpp_binary()))
    go = tmp_path / "go"
    procs, results = [], []
    for i in range(6):
        role = "cpp" if i < 3 else "py"
        arrow = _ipc(tmp_path / f"w{i}.arrow", _rows(1 + i * 10, 10))
        ready, result = tmp_path / f"ready{i}", tmp_path / f"result{i}.json"
        procs.append(subprocess.Popen(
            [sys.executable, str(WORKER), role, "append", uri, str(arrow), str(go), str(ready), str(result)],
            env=env, stdin=subprocess.DEVNULL))
        results.append((ready, result))
    deadline = time.monotonic() + TIMEOUT_S
    while not all(r.exists() for r, _ in results):
        assert time.monotonic() < deadline, "workers did not get ready"
        time.sleep(0.01)
    before = len(moto.requests())
    go.write_text("go")
    for p in procs:
        p.wait(timeout=TIMEOUT_S * 2)
    outcomes = [json.loads(res.read_text()) for _, res in results]
    assert all(o["ok"] for o in outcomes), outcomes
    ds = lance.dataset(uri, storage_options=opts)
    assert ds.version == 7
    assert sorted(ds.to_table().column("id").to_pylist()) == list(range(61))
    assert cli("count", uri, options=opts).stdout.strip() == "61"
    puts = [r for r in moto.requests()[before:] if r[0] == "PUT" and "/_versions/" in r[1]]
    # Each version was created exactly once; every other attempt was refused.
    assert sorted({r[2] for r in puts}) <= [200, 412], puts
    assert len([r for r in puts if r[2] == 200]) == 6, puts
    print(f"racing appends: {len([r for r in puts if r[2] == 412])} manifest PUTs refused with 412")


def test_conditional_put_refused_never_overwrites(moto, bucket):
    # The store-level mechanism, through the gtest binary built beside the CLI.
    binary = lance_cpp_binary().with_name("s3_store_test")
    if not binary.exists():
        pytest.skip(f"{binary} not built")
    env = _clean_env(LANCE_TEST_S3_URI=f"s3://{bucket}/cp", AWS_ENDPOINT_URL=moto.endpoint,
                     AWS_ALLOW_HTTP="true", AWS_REGION=REGION, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x")
    proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[  PASSED  ] 2 tests" in proc.stdout, proc.stdout
    assert "SKIPPED" not in proc.stdout
    body = moto.client().get_object(Bucket=bucket, Key="cp/_versions/once.manifest")["Body"].read()
    assert body == b"first"
    refused = [r for r in moto.requests() if r[0] == "PUT" and f"/{bucket}/cp/_versions/" in r[1] and r[2] == 412]
    assert len(refused) == 1 + 7


def test_environment_only(moto, bucket, tmp_path):
    uri = f"s3://{bucket}/envds"
    env = _clean_env(AWS_ENDPOINT_URL=moto.endpoint, AWS_ALLOW_HTTP="true", AWS_DEFAULT_REGION=REGION,
                     AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x")
    cli("write", uri, "--input", _ipc(tmp_path / "a.arrow", _rows(0, 7)), "--quiet", env=env)
    assert cli("count", uri, env=env).stdout.strip() == "7"
    assert lance.dataset(uri, storage_options=_options(moto)).count_rows() == 7


def test_http_endpoint_without_allow_http_is_a_clear_error(moto, bucket, tmp_path):
    uri = f"s3://{bucket}/nohttp"
    opts = {k: v for k, v in _options(moto).items() if k != "allow_http"}
    proc = cli("write", uri, "--input", _ipc(tmp_path / "a.arrow", _rows(0, 1)), options=opts, check=False)
    assert proc.returncode == 1
    assert "allow_http" in proc.stderr and moto.endpoint in proc.stderr and uri in proc.stderr, proc.stderr
    # Refused keys are named; a missing '=' is a usage error.
    proc = cli("count", uri, options=dict(opts, allow_http="true", aws_profile="p"), check=False)
    assert proc.returncode == 1 and "aws_profile" in proc.stderr, proc.stderr
    proc = cli("count", uri, "--storage-option", "allow_http", check=False)
    assert proc.returncode == 2 and "KEY=VALUE" in proc.stderr, proc.stderr
    assert _keys(moto, bucket) == []


def test_signatures_checked(tmp_path):
    # moto verifies signatures after its first N requests: those create an
    # IAM user with an access key and the bucket.
    server = Moto(tmp_path / "moto-auth.log", INITIAL_NO_AUTH_ACTION_COUNT="3")
    try:
        iam = boto3.client("iam", endpoint_url=server.endpoint, region_name=REGION,
                           aws_access_key_id="x", aws_secret_access_key="x")
        iam.create_user(UserName="lance")
        iam.put_user_policy(UserName="lance", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="lance")["AccessKey"]
        ak, sk = key["AccessKeyId"], key["SecretAccessKey"]
        server.client(ak, sk).create_bucket(Bucket="signed")
        uri = "s3://signed/ds"
        opts = _options(server, ak, sk)
        cli("write", uri, "--input", _ipc(tmp_path / "a.arrow", _rows(0, 5)), "--quiet", options=opts)
        cli("write", uri, "--input", _ipc(tmp_path / "b.arrow", _rows(5, 5)), "--mode", "append", "--quiet",
            options=opts)
        assert lance.dataset(uri, storage_options=opts).count_rows() == 10
        bad = cli("count", uri, options=dict(opts, aws_secret_access_key="wrong"), check=False)
        assert bad.returncode == 1, bad.stderr
        bad = cli("write", uri, "--input", _ipc(tmp_path / "c.arrow", _rows(10, 1)), "--mode", "append",
                  options=dict(opts, aws_secret_access_key="wrong"), check=False)
        assert bad.returncode != 0
        assert lance.dataset(uri, storage_options=opts).version == 2
        manifest_puts = [r for r in server.requests() if r[0] == "PUT" and "/_versions/" in r[1]]
        assert [r[2] for r in manifest_puts] == [200, 200], manifest_puts
    finally:
        server.stop()


def test_python_binding_storage_options(moto, bucket):
    lance_cpp = pytest.importorskip("lance_cpp")
    uri = f"s3://{bucket}/py"
    opts = _options(moto)
    lance_cpp.write_dataset(_rows(0, 12), uri, storage_options=opts)
    lance.write_dataset(_rows(12, 3), uri, mode="append", storage_options=opts)
    assert lance_cpp.dataset(uri, storage_options=opts).count_rows() == 15
    assert lance.dataset(uri, storage_options=opts).version == 2
    with pytest.raises(NotImplementedError, match="aws_request_payer"):
        lance_cpp.dataset(uri, storage_options=dict(opts, aws_request_payer="true"))
    with pytest.raises(Exception, match="allow_http"):
        lance_cpp.dataset(uri, storage_options={k: v for k, v in opts.items() if k != "allow_http"})
