#!/usr/bin/env python3
"""Writes deploy/grafana/dashboards/tally.json: the Tally dashboard.
Edit the panel list here and rerun; test/integration/operations.test.ts
checks every tally_ metric named below exists on live endpoints."""
import json, os

panels = [
    ("Increments/s (acknowledged)", ["sum(rate(tally_increments_accepted_total[1m]))"], "ops"),
    ("Increments/s per hot counter (top K)", ["tally_counter_increments_per_second"], "ops"),
    ("Accepted vs deduplicated vs rejected", [
        "sum(rate(tally_increments_accepted_total[1m]))",
        "sum(rate(tally_increments_deduplicated_total[1m]))",
        "sum by (reason) (rate(tally_increments_rejected_total[1m]))",
    ], "ops"),
    ("Read latency p50 / p99 by consistency", [
        "histogram_quantile(0.5, sum by (le, consistency) (rate(tally_read_latency_seconds_bucket[1m])))",
        "histogram_quantile(0.99, sum by (le, consistency) (rate(tally_read_latency_seconds_bucket[1m])))",
    ], "s"),
    ("Increment latency p99", ["histogram_quantile(0.99, sum by (le, rpc) (rate(tally_increment_latency_seconds_bucket[1m])))"], "s"),
    ("Cache age when served (p99)", ["histogram_quantile(0.99, sum by (le) (rate(tally_cache_age_seconds_bucket[1m])))"], "s"),
    ("Shard skew (max / mean shard rate)", ["tally_counter_shard_skew", "tally_shard_skew_max"], "none"),
    ("Shards of hot counters", ["tally_counter_shards"], "none"),
    ("Log commit batch size (rows per fsync)", ["sum by (node) (rate(tally_log_commit_batch_rows_sum[1m])) / sum by (node) (rate(tally_log_commit_batch_rows_count[1m]))"], "none"),
    ("fsync latency p99", ["histogram_quantile(0.99, sum by (le, node) (rate(tally_log_fsync_seconds_bucket[1m])))"], "s"),
    ("Replication lag (entries)", ["tally_replication_lag_entries"], "none"),
    ("Replication lag (ms)", ["tally_replication_lag_ms"], "ms"),
    ("Pairs in sync", ["tally_pair_in_sync"], "none"),
    ("Failovers and out-of-sync periods", ["increase(tally_failovers_total[5m])", "increase(tally_out_of_sync_total[5m])"], "none"),
    ("Reconcile drift", ["tally_reconcile_drift"], "none"),
    ("Nodes up", ['up{job=~"tally.*"}'], "none"),
    ("Directory size (counters)", ["tally_directory_counters"], "none"),
    ("Idempotency keys held", ["tally_dedup_keys", "tally_dedup_window_covered_seconds"], "none"),
]

dashboard = {
    "uid": "tally",
    "title": "Tally",
    "tags": ["tally"],
    "timezone": "browser",
    "schemaVersion": 39,
    "version": 1,
    "refresh": "5s",
    "time": {"from": "now-30m", "to": "now"},
    "panels": [],
}
for index, (title, exprs, unit) in enumerate(panels):
    dashboard["panels"].append({
        "id": index + 1,
        "type": "timeseries",
        "title": title,
        "datasource": {"type": "prometheus", "uid": "prometheus"},
        "gridPos": {"h": 8, "w": 12, "x": (index % 2) * 12, "y": (index // 2) * 8},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"refId": chr(65 + n), "expr": expr, "datasource": {"type": "prometheus", "uid": "prometheus"}} for n, expr in enumerate(exprs)],
    })
path = os.path.join(os.path.dirname(__file__), "dashboards", "tally.json")
with open(path, "w") as out:
    json.dump(dashboard, out, indent=2)
    out.write("\n")
