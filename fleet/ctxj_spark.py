#!/usr/bin/env python3
"""ctxj on a fleet: `ctxj export` over millions of agent transcripts with Apache Spark.

Reads every ``*.jsonl`` under ``--input`` (any Hadoop path: local, s3a://, abfss://, gs://; an
input that does not exist is skipped with a note; with no ``--input``, the agents' default folders
that exist, as ``ctxj export --folders`` names them: Claude Code, Codex, pi) with the
``binaryFile`` source, keys each file to its session (a Claude Code subagent file
``<dir>/<sid>/subagents/agent-*.jsonl`` goes with ``<dir>/<sid>.jsonl``), repartitions by
session so each session is whole in one partition, and runs one ``ctxj export`` process per
partition on a temporary copy of its files. The per-request rows (``ctxj.export/1``, plus a
stable ``row_id``, the recorded ``cwd`` and ``repository``, ``timestamp`` typed) are written as
Parquet partitioned by day (``--mode append`` adds only rows whose ``row_id`` is not there yet); the rollups per day x agent x model x strategy as Parquet and as a
printed table. See docs/fleet.md.

The per-partition work is the plain function :func:`export_partition` (no Spark in it), so a
Ray Data or Dask adapter is a few lines.

    spark-submit fleet/ctxj_spark.py --ctxj ./ctxj --input s3a://logs/agents --output s3a://ctxj/out
    python fleet/ctxj_spark.py --master 'local[2]' --ctxj target/release/ctxj \
        --input sample-journals/transcripts --output /tmp/ctxj-fleet -s sliding-8
    python fleet/ctxj_spark.py --master 'local[2]' --ctxj target/release/ctxj --output /tmp/ctxj-fleet
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from typing import Iterable, Iterator

# The row of `ctxj export` (docs/schema/ctxj.export-1.json), in order, with its Spark SQL type.
COLUMNS = [
    ("schema", "STRING"),
    ("session", "STRING"),
    ("agent", "STRING"),
    ("project", "STRING"),
    ("source", "STRING"),
    ("parent_session", "STRING"),
    ("turn", "BIGINT"),
    ("timestamp", "STRING"),
    ("model", "STRING"),
    ("provider", "STRING"),
    ("strategy", "STRING"),
    ("prompt_tokens_recorded", "BIGINT"),
    ("prompt_tokens_estimated", "BIGINT"),
    ("input_tokens", "BIGINT"),
    ("cache_read_tokens", "BIGINT"),
    ("cache_write_tokens", "BIGINT"),
    ("output_tokens", "BIGINT"),
    ("cost_usd", "DOUBLE"),
    ("break_cost_usd", "DOUBLE"),
    ("simulated_hit", "DOUBLE"),
    ("break_cause", "STRING"),
    ("compaction", "BOOLEAN"),
]
# What the job adds to each row (see `export_partition`): its stable id, and the working directory
# and repository the transcript records.
COLUMNS += [("row_id", "STRING"), ("cwd", "STRING"), ("repository", "STRING")]
# The count columns whose value was past int64 and clamped to its maximum (comma-separated; null
# when none): Arrow and Parquet have no unsigned 64-bit Spark type (see `clamp_int64`).
COLUMNS += [("clamped_int64", "STRING")]
DDL = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)

_SUBAGENT = re.compile(r"/subagents/[^/]+\.jsonl$")


def session_key(path: str) -> str:
    """The session a file belongs to: `<dir>/<sid>` for `<dir>/<sid>.jsonl` and for
    `<dir>/<sid>/subagents/*.jsonl`; a ctxj session's folder for its `journal.jsonl`."""
    if _SUBAGENT.search(path):
        return _SUBAGENT.sub("", path)
    if path.endswith("/journal.jsonl"):
        return path[: -len("/journal.jsonl")]
    return path[: -len(".jsonl")] if path.endswith(".jsonl") else path


def _local_name(path: str) -> str:
    """A path without its scheme and authority (`s3a://bucket/a/b` -> `bucket/a/b`), kept whole
    below the temporary folder so ctxj sees the agents' folder layout (projects/, sessions/)."""
    p = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*:/*", "", path)
    parts = [x for x in p.split("/") if x not in ("", ".", "..")]
    return os.path.join(*parts) if parts else "unnamed.jsonl"


def row_id(source: str, strategy: str, turn: int) -> str:
    """A row's stable id: the first 32 hex digits of SHA-256 over its natural key, the source
    file's path, the strategy and the turn, joined by U+001F. A transcript only grows, so a
    re-run (or `--mode append` over a grown session) gives its earlier rows the same ids."""
    key = "\x1f".join([source, strategy, str(turn)])
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def recorded_place(content: bytes) -> tuple[str | None, str | None]:
    """The working directory and repository a transcript records, from its first line that has
    them: Claude Code's per-line `cwd`, pi's session header `cwd`, Codex's `session_meta`
    `payload.cwd` and `payload.git.repository_url` (docs/fleet.md). `(None, None)` when none."""
    cwd = repo = None
    for line in content.splitlines():
        if b'"cwd"' not in line:
            continue
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if not isinstance(v, dict):
            continue
        p = v.get("payload") if v.get("type") in ("session_meta", "turn_context") else None
        if isinstance(p, dict):
            git = p.get("git")
            if repo is None and isinstance(git, dict) and isinstance(git.get("repository_url"), str):
                repo = git["repository_url"]
            v = p
        if cwd is None and isinstance(v.get("cwd"), str):
            cwd = v["cwd"]
        if cwd is not None:
            break
    return cwd, repo


INT64_MAX = (1 << 63) - 1
_COUNTS = [name for name, kind in COLUMNS if kind == "BIGINT"]

# What `ctxj export` says (exit 2) when none of its inputs is a transcript it exports.
_NO_TRANSCRIPT = b"no transcript of an agent ctxj imports found"


def clamp_int64(row: dict) -> list[str]:
    """Clamps `row`'s counts past int64 (a damaged or hostile transcript's u64 tokens: a BIGINT
    cannot hold them and Arrow would fail the whole partition) to int64's maximum, as the OTLP
    export does, and names them in `clamped_int64`. Returns the names."""
    clamped = [c for c in _COUNTS if isinstance(row.get(c), int) and row[c] > INT64_MAX]
    for c in clamped:
        row[c] = INT64_MAX
    row["clamped_int64"] = ",".join(clamped) or None
    return clamped


def _note(msg: str) -> None:
    """A line on the task's stderr (the driver's with a local master, the executor's log else)."""
    print(f"ctxj_spark: {msg}", file=sys.stderr, flush=True)


def export_partition(
    files: Iterable[tuple[str, bytes]], ctxj: str, strategies: list[str], tmp_root: str | None = None
) -> Iterator[dict]:
    """Runs one `ctxj export` over `files` ((path, content) pairs of whole sessions) and yields
    its rows as dicts, `source` mapped back to the original path. Engine-free."""
    work = tempfile.mkdtemp(prefix="ctxj-part-", dir=tmp_root)
    try:
        back: dict[str, str] = {}
        place: dict[str, tuple[str | None, str | None]] = {}
        for path, content in files:
            local = os.path.join(work, "in", _local_name(path))
            os.makedirs(os.path.dirname(local), exist_ok=True)
            with open(local, "wb") as f:
                f.write(content)
            back[local] = path
            place[local] = recorded_place(content)
        if not back:
            return
        exe = os.path.join(work, "ctxj")
        shutil.copyfile(ctxj, exe)
        os.chmod(exe, os.stat(exe).st_mode | stat.S_IXUSR)
        args = [exe, "export", os.path.join(work, "in"), "--format", "ndjson"]
        for s in strategies:
            args += ["--strategy", s]
        out_path = os.path.join(work, "rows.ndjson")
        with open(out_path, "wb") as out:
            r = subprocess.run(args, stdout=out, stderr=subprocess.PIPE, env={"PATH": os.environ.get("PATH", ""), "TZ": "UTC"})
        if r.returncode == 2 and _NO_TRANSCRIPT in r.stderr:
            # Only ctxj journals (or other files ctxj does not export) here: nothing to add.
            _note(f"skipped a partition of {len(back)} file(s): none is a transcript ctxj exports (ctxj journals?)")
            return
        if r.returncode != 0:
            raise RuntimeError(f"ctxj export failed ({r.returncode}): {r.stderr.decode(errors='replace')[-2000:]}")
        clamped_rows = 0
        with open(out_path, "rb") as f:
            for line in f:
                row = json.loads(line)
                clamped_rows += bool(clamp_int64(row))
                row["cwd"], row["repository"] = place.get(row["source"], (None, None))
                row["source"] = back.get(row["source"], row["source"])
                row["row_id"] = row_id(row["source"], row["strategy"], row["turn"])
                yield row
        if clamped_rows:
            _note(f"{clamped_rows} row(s) had counts past int64: clamped to {INT64_MAX} (column clamped_int64 names them)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _arrow_mapper(ctxj_name: str, strategies: list[str]):
    """The Spark side of `export_partition`: Arrow batches of (path, content) in, row batches out."""

    def run(batches):
        import pyarrow as pa
        from pyspark import SparkFiles

        def files():
            for b in batches:
                d = b.to_pydict()
                yield from zip(d["path"], d["content"])

        names = [n for n, _ in COLUMNS]
        rows = []
        for row in export_partition(files(), SparkFiles.get(ctxj_name), strategies):
            rows.append(row)
            if len(rows) == 8192:
                yield pa.RecordBatch.from_pylist(rows, schema=_arrow_schema()).select(names)
                rows = []
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=_arrow_schema()).select(names)

    return run


def _arrow_schema():
    import pyarrow as pa

    kinds = {"STRING": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
    return pa.schema([(n, kinds[k]) for n, k in COLUMNS])


def _default_partitions(spark) -> int:
    """2 x the default parallelism; Spark Connect has no SparkContext: the shuffle partitions."""
    try:
        return 2 * spark.sparkContext.defaultParallelism
    except Exception:
        return int(spark.conf.get("spark.sql.shuffle.partitions", "200"))


def rollups(requests):
    """Per day x agent x model x strategy: requests, tokens, cost, hit rate, breaks and their
    cost, the rows with a clamped count, and each strategy's savings against `recorded` in the
    same group."""
    from pyspark.sql import functions as F

    # Token sums saturate at int64's maximum (ctxj's own sums saturate at u64's): a BIGINT sum of
    # clamped counts would overflow and fail the job under ANSI mode. Summed as DECIMAL(38,0).
    wide = "decimal(38,0)"
    top = F.lit(INT64_MAX).cast(wide)

    def sat_sum(col):
        return F.least(F.sum(col.cast(wide)), top).cast("bigint")

    prompt = F.col("input_tokens").cast(wide) + F.col("cache_read_tokens").cast(wide) + F.col("cache_write_tokens").cast(wide)
    keys = ["day", "agent", "model", "strategy"]
    g = requests.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("requests"),
        F.countDistinct("session").alias("sessions"),
        sat_sum(prompt).alias("prompt_tokens"),
        sat_sum(F.col("input_tokens")).alias("input_tokens"),
        sat_sum(F.col("cache_read_tokens")).alias("cache_read_tokens"),
        sat_sum(F.col("cache_write_tokens")).alias("cache_write_tokens"),
        sat_sum(F.col("output_tokens")).alias("output_tokens"),
        F.sum("cost_usd").alias("cost_usd"),
        F.count("break_cause").alias("breaks"),
        F.sum("break_cost_usd").alias("break_cost_usd"),
        F.count("clamped_int64").alias("clamped_rows"),
    )
    g = g.withColumn("hit_rate", F.col("cache_read_tokens") / F.when(F.col("prompt_tokens") > 0, F.col("prompt_tokens")))
    rec = g.filter(F.col("strategy") == "recorded").select(
        "day", "agent", "model", F.col("cost_usd").alias("recorded_cost_usd")
    )
    g = g.join(rec, ["day", "agent", "model"], "left").withColumn(
        "savings_usd",
        F.when(F.col("strategy") != "recorded", F.col("recorded_cost_usd") - F.col("cost_usd")),
    )
    return g.drop("recorded_cost_usd").orderBy(*keys)


def default_inputs(ctxj: str) -> list[str]:
    """The agents' default folders that exist here, as `ctxj export --folders` lists them (one
    JSON object a line), each named on stderr."""
    r = subprocess.run([ctxj, "export", "--folders"], capture_output=True, check=True)
    out = []
    for line in r.stdout.decode().splitlines():
        f = json.loads(line)
        print(f"reading {f['agent']} logs in {f['path']}", file=sys.stderr)
        out.append(f["path"])
    return out


def read_inputs(spark, inputs: list[str]):
    """Every `*.jsonl` under the inputs that exist, one row per file (a file under two inputs
    once); an input that does not exist is named on stderr and skipped. `None` when none exists."""
    frames = []
    for p in inputs:
        try:
            df = (
                spark.read.format("binaryFile")
                .option("recursiveFileLookup", "true")
                .option("pathGlobFilter", "*.jsonl")
                .load(p)
                .select("path", "content")
            )
            _ = df.schema  # resolves the path now (Spark Connect defers it to the first action)
        except Exception as e:
            if "PATH_NOT_FOUND" not in str(e) and "Path does not exist" not in str(e):
                raise
            print(f"skipped {p}: no such folder", file=sys.stderr)
            continue
        frames.append(df)
    if not frames:
        return None
    files = frames[0]
    for df in frames[1:]:
        files = files.unionByName(df)
    return files.dropDuplicates(["path"]) if len(frames) > 1 else files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--input",
        action="append",
        default=[],
        help="folder(s) of transcripts, any Hadoop path (repeatable; a missing one is skipped; "
        "default: the agents' folders that exist, as `ctxj export --folders` lists them)",
    )
    ap.add_argument("--output", required=True, help="folder for requests/ and rollups/ (Parquet)")
    ap.add_argument("--ctxj", default=shutil.which("ctxj"), help="the ctxj binary to ship (default: on PATH)")
    ap.add_argument("-s", "--strategy", action="append", default=[], help="strategy to simulate (repeatable)")
    ap.add_argument("--partitions", type=int, default=0, help="partitions (default: 2 x default parallelism; Connect: shuffle partitions)")
    ap.add_argument("--master", help="Spark master when not run by spark-submit (e.g. local[2])")
    ap.add_argument(
        "--mode",
        default="overwrite",
        choices=["overwrite", "append", "error"],
        help="requests/ write mode (append: only rows whose row_id is new); rollups/ are always rewritten",
    )
    ap.add_argument("--show", type=int, default=50, help="rollup rows to print")
    a = ap.parse_args(argv)
    if not a.ctxj or not os.path.isfile(a.ctxj):
        ap.error("--ctxj: the ctxj binary (Linux x86-64, glibc >= 2.34) is needed")
    inputs = a.input or default_inputs(a.ctxj)
    if not inputs:
        ap.error(
            "no --input and no agent folder here (~/.claude/projects, ~/.codex/sessions, ~/.pi/agent/sessions "
            "or their environment overrides, see `ctxj usage --help`)"
        )

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    # Local runs: the workers use this interpreter (with pyarrow), not whatever python3 is first.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Timestamps as Parquet's TIMESTAMP(MICROS, UTC), not the legacy INT96, so DuckDB, polars and
    # pandas read them as timestamps with their default settings.
    b = (
        SparkSession.builder.appName("ctxj-fleet")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        # Local files through Hadoop's raw file system: the default one looks for a checksum file
        # `.<name>.crc` beside each file and cannot make that path for a name holding `:` (pi's
        # and many tools' timestamps), which failed the whole job ("Relative path in absolute
        # URI"). Agents write no checksum files, so nothing is lost.
        .config("spark.hadoop.fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem")
    )
    if a.master:
        b = b.master(a.master)
    spark = b.getOrCreate()
    try:
        spark.addArtifacts(os.path.abspath(a.ctxj), file=True)  # Spark Connect, and classic >= 4.0
    except Exception:  # classic Spark 3.x has no addArtifacts
        spark.sparkContext.addFile(os.path.abspath(a.ctxj))
    name = os.path.basename(a.ctxj)

    files = read_inputs(spark, inputs)
    if files is None:
        print("none of the inputs exists: nothing to read", file=sys.stderr)
        spark.stop()
        return 2
    if files.isEmpty():
        print(f"no transcripts: no *.jsonl file under {', '.join(inputs)}: nothing to export", file=sys.stderr)
        spark.stop()
        return 2
    key = F.udf(session_key, "string")
    parts = a.partitions or _default_partitions(spark)
    keyed = files.withColumn("session_key", key("path")).repartition(parts, "session_key").drop("session_key")
    rows = keyed.mapInArrow(_arrow_mapper(name, a.strategy), DDL)
    # RFC 3339 text to a TIMESTAMP (UTC session time zone), and its date as the partition.
    requests = rows.withColumn("timestamp", F.to_timestamp("timestamp")).withColumn("day", F.to_date("timestamp"))
    out_requests = a.output.rstrip("/") + "/requests"
    if a.mode == "append":
        try:
            seen = spark.read.parquet(out_requests).select("row_id")
            requests = requests.join(seen, "row_id", "left_anti")
        except Exception as e:  # nothing written yet: every row is new
            if "PATH_NOT_FOUND" not in str(e) and "UNABLE_TO_INFER_SCHEMA" not in str(e):
                raise
    requests.write.mode(a.mode).partitionBy("day").parquet(out_requests)

    try:
        requests = spark.read.parquet(out_requests)
    except Exception as e:  # no partition wrote a row (overwrite mode): Spark cannot read it back
        if "UNABLE_TO_INFER_SCHEMA" not in str(e):
            raise
        print(
            "no transcripts: none of the *.jsonl files is a transcript ctxj exports (ctxj journals are not "
            "exported; `ctxj export --help` names the agents): no request rows",
            file=sys.stderr,
        )
        spark.stop()
        return 2
    r = rollups(requests)
    r.write.mode("overwrite").parquet(a.output.rstrip("/") + "/rollups")
    r = spark.read.parquet(a.output.rstrip("/") + "/rollups").orderBy("day", "agent", "model", "strategy")
    shown = r.select(
        "day", "agent", "model", "strategy", "requests", "prompt_tokens", "output_tokens",
        F.round("cost_usd", 4).alias("cost_usd"), F.round("hit_rate", 3).alias("hit_rate"),
        "breaks", F.round("break_cost_usd", 4).alias("break_cost_usd"), F.round("savings_usd", 4).alias("savings_usd"),
    )
    shown.show(a.show, truncate=False)
    totals = requests.groupBy("strategy").agg(
        F.count(F.lit(1)).alias("requests"), F.sum("cost_usd").alias("cost_usd")
    ).orderBy("strategy")
    for t in totals.collect():
        print(f"{t['strategy']}: {t['requests']} requests, ${t['cost_usd'] or 0:.4f}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
