#!/usr/bin/env python3
"""Checks of the fleet test (tests/cli/fleet.rs): the totals per strategy of the Spark job's
requests and rollups (Parquet) and the requests' column types and repeated row ids, read by DuckDB
and again by polars with its default settings, of `ctxj export`'s NDJSON read by DuckDB and by
polars' `read_ndjson`, and of the OTLP JSON
lines after a strict protobuf parse; prints them as one JSON object. Fails (exit 1) on an OTLP
line that does not parse strictly or lacks a required attribute.

    python fleet/check_fleet.py --spark OUT --ndjson rows.ndjson --otlp traces.jsonl
"""

import argparse
import json
import sys

SUMS = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"]
CHAT_ATTRS = [
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.conversation.id",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.output_tokens",
    "ctxj.strategy",
    "ctxj.cost_usd",
]


def per_strategy(con, relation: str) -> dict:
    cols = ", ".join(f"sum({c})::BIGINT AS {c}" for c in SUMS)
    q = f"SELECT strategy, count(*) AS requests, {cols}, sum(cost_usd) AS cost_usd FROM {relation} GROUP BY strategy"
    return {r[0]: dict(zip(["requests", *SUMS, "cost_usd"], r[1:])) for r in con.execute(q).fetchall()}


def rollup_totals(con, relation: str) -> dict:
    cols = ", ".join(f"sum({c})::BIGINT AS {c}" for c in SUMS)
    q = f"SELECT strategy, sum(requests)::BIGINT, {cols}, sum(cost_usd) FROM {relation} GROUP BY strategy"
    return {r[0]: dict(zip(["requests", *SUMS, "cost_usd"], r[1:])) for r in con.execute(q).fetchall()}


def spark_table(con, relation: str) -> dict:
    """The requests table's column types (DuckDB's names) and how many rows share a row_id."""
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()}
    dup = con.execute(f"SELECT count(*) - count(DISTINCT row_id) FROM {relation}").fetchone()[0]
    return {"types": types, "duplicate_row_ids": dup}


def polars_totals(frame, requests: str) -> dict:
    """Per strategy, as `per_strategy`/`rollup_totals`, of a polars frame."""
    import polars as pl

    count = pl.col(requests).sum() if requests != "*" else pl.len()
    sums = [pl.col(c).sum().cast(pl.Int64).alias(c) for c in SUMS]
    agg = frame.group_by("strategy").agg(count.cast(pl.Int64).alias("requests"), *sums, pl.col("cost_usd").sum())
    return {r["strategy"]: {k: v for k, v in r.items() if k != "strategy"} for r in agg.iter_rows(named=True)}


def polars_reads(spark: str, ndjson: str) -> dict:
    """The same totals through polars, every reader with its defaults: the requests folder (a single
    directory, so polars reads its hive partitions by itself), the rollups and the NDJSON; and the
    type polars gives the requests' timestamp."""
    import polars as pl

    requests = pl.read_parquet(f"{spark}/requests/")
    return {
        "polars_requests": polars_totals(requests, "*"),
        "polars_timestamp": str(requests.schema["timestamp"]),
        "polars_rollups": polars_totals(pl.read_parquet(f"{spark}/rollups/"), "requests"),
        "polars_ndjson": polars_totals(pl.read_ndjson(ndjson), "*"),
    }


def otlp(path: str) -> dict:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    lines = spans = 0
    totals = dict.fromkeys(["input_tokens", "output_tokens", "cache_read", "cache_creation"], 0)
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            req = json_format.Parse(line, ExportTraceServiceRequest())  # unknown fields are errors
            raw = json.loads(line)
            lines += 1
            for rs in raw["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    root = ss["spans"][0]
                    if not root["name"].startswith("invoke_agent") or len(root["traceId"]) != 32:
                        sys.exit(f"{path}:{no}: the first span is not an invoke_agent root with a hex trace id")
                    for s in ss["spans"][1:]:
                        if not s["name"].startswith("chat"):
                            continue  # a subagent's `execute_tool Task` span
                        a = {x["key"]: x["value"] for x in s["attributes"]}
                        missing = [k for k in CHAT_ATTRS if k not in a]
                        if missing or s.get("parentSpanId") != root["spanId"] or len(s["spanId"]) != 16:
                            sys.exit(f"{path}:{no}: span {s['name']}: missing {missing} or bad ids")
                        spans += 1
                        totals["input_tokens"] += int(a["gen_ai.usage.input_tokens"]["intValue"])
                        totals["output_tokens"] += int(a["gen_ai.usage.output_tokens"]["intValue"])
                        totals["cache_read"] += int(a["gen_ai.usage.cache_read.input_tokens"]["intValue"])
                        totals["cache_creation"] += int(a["gen_ai.usage.cache_creation.input_tokens"]["intValue"])
            assert len(req.resource_spans) == 1
    return {"lines": lines, "chat_spans": spans, **totals}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spark", required=True)
    ap.add_argument("--ndjson", required=True)
    ap.add_argument("--otlp", required=True)
    a = ap.parse_args()
    import duckdb

    con = duckdb.connect()
    requests = f"read_parquet('{a.spark}/requests/**/*.parquet', hive_partitioning=true)"
    out = {
        "spark_requests": per_strategy(con, requests),
        "spark_table": spark_table(con, requests),
        "spark_rollups": rollup_totals(con, f"read_parquet('{a.spark}/rollups/*.parquet')"),
        "duckdb_ndjson": per_strategy(con, f"read_json_auto('{a.ndjson}', format='newline_delimited')"),
        "otlp": otlp(a.otlp),
        **polars_reads(a.spark, a.ndjson),
    }
    json.dump(out, sys.stdout, indent=1, default=float)
    print()


if __name__ == "__main__":
    main()
