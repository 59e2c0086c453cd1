#!/usr/bin/env python3
"""Writes deploy/grafana/dashboards/tally.json: the Tally dashboard, what an
on-call engineer opens first. A stat row (pairs out of sync, supervisor,
disk free, refused calls, errors by code, processes down), then latency, replication, disk and
process rows. Variables: datasource, job, instance, pair; every query is
filtered by them. Edit the lists here and rerun; never edit the JSON.
test/integration/operations.test.ts checks every tally_ metric named here
exists on live endpoints; test/integration/prometheus-rules.test.ts checks
the JSON is this script's output."""
import json, os

DS = {"type": "prometheus", "uid": "${datasource}"}
# Every series of a Tally process; pair-labelled router series add PAIR.
SEL = 'job=~"$job", instance=~"$instance"'
PAIR = SEL + ', pair=~"$pair"'
# The supervisor's view of the pairs: other routers may hold a stale value.
SUPERVISOR = 'and on (instance) (tally_router_supervisor{job=~"$job"} == 1)'


def q(expr, legend):
    return {"expr": expr, "legend": legend}


def quantiles(metric, by, legend_by):
    """p50 and p99 of a histogram, by `by`, each with its own legend."""
    label = " ".join("{{%s}}" % name for name in legend_by)
    return [
        q('histogram_quantile(0.5, sum by (le, %s) (rate(%s_bucket{%s}[$__rate_interval])))' % (by, metric, SEL), ("p50 " + label).strip()),
        q('histogram_quantile(0.99, sum by (le, %s) (rate(%s_bucket{%s}[$__rate_interval])))' % (by, metric, SEL), ("p99 " + label).strip()),
    ]


# (title, queries, unit, extra field config); stat panels: 4 wide, 6 to a row.
stats = [
    # Counts of what is wrong, red from the first one: a count of what is
    # right beside a total cannot be given one threshold (1 of 2 would be green).
    ("Pairs out of sync", [
        q('count((tally_pair_in_sync{%s} %s) == 0) or vector(0)' % (PAIR, SUPERVISOR), "out of sync"),
    ], "none", {"thresholds": [("green", None), ("red", 1)]}),
    ("Supervisor", [q('tally_router_supervisor{%s} == 1' % SEL, "{{instance}}")], "none",
     {"textMode": "name", "noValue": "none: no failovers", "thresholds": [("red", None), ("green", 1)]}),
    ("Least disk free", [q('min(tally_data_dir_free_bytes{%s})' % SEL, "min")], "bytes",
     {"thresholds": [("red", None), ("orange", 1e9), ("green", 1e10)]}),
    ("Refused calls/s", [q('sum by (reason) (rate(tally_router_calls_refused_total{%s}[$__rate_interval]))' % SEL, "{{reason}}")], "reqps",
     {"noValue": "0", "thresholds": [("green", None), ("orange", 0.001)]}),
    ("Increment errors/s by code", [
        q('sum by (reason) (rate(tally_increments_rejected_total{%s}[$__rate_interval]))' % SEL, "{{reason}}"),
    ], "reqps", {"noValue": "0", "thresholds": [("green", None), ("orange", 0.001)]}),
    ("Processes down", [
        q('count(up{%s} == 0) or vector(0)' % SEL, "down"),
    ], "none", {"thresholds": [("green", None), ("red", 1)]}),
]

rows = [
    ("Traffic and latency", [
        ("Increments/s", [
            q('sum(rate(tally_increments_accepted_total{%s}[$__rate_interval]))' % SEL, "accepted"),
            q('sum(rate(tally_increments_deduplicated_total{%s}[$__rate_interval]))' % SEL, "deduplicated"),
            q('sum by (reason) (rate(tally_increments_rejected_total{%s}[$__rate_interval]))' % SEL, "rejected {{reason}}"),
        ], "ops"),
        ("Increment latency p50 / p99", quantiles("tally_increment_latency_seconds", "rpc", ["rpc"]), "s"),
        ("Read latency p50 / p99", quantiles("tally_read_latency_seconds", "consistency", ["consistency"]), "s"),
        ("Cached total age when served p50 / p99", quantiles("tally_cache_age_seconds", "instance", ["instance"]), "s"),
        ("Hottest counters (top K)", [q('tally_hot_increments_per_second{%s}' % SEL, "{{counter}}")], "ops"),
        ("Calls in flight", [q('tally_router_calls_in_flight{%s}' % SEL, "{{instance}}")], "none"),
        ("Failed calls/s by method and code (every RPC)", [
            q('sum by (method, code) (rate(tally_rpc_total{%s, code!="OK"}[$__rate_interval]))' % SEL, "{{method}} {{code}}"),
        ], "ops"),
    ]),
    ("Replication", [
        ("Pairs in sync (supervisor's view)", [q('tally_pair_in_sync{%s} %s' % (PAIR, SUPERVISOR), "pair {{pair}}")], "none"),
        ("Failovers and out-of-sync periods", [
            q('sum by (pair) (increase(tally_failovers_total{%s}[$__rate_interval]))' % PAIR, "failovers pair {{pair}}"),
            q('sum by (pair) (increase(tally_out_of_sync_total{%s}[$__rate_interval]))' % PAIR, "out of sync pair {{pair}}"),
        ], "none"),
        ("Replication lag (entries)", [q('tally_replication_lag_entries{%s}' % SEL, "{{node}}")], "none"),
        ("Replication lag (time)", [q('tally_replication_lag_seconds{%s}' % SEL, "{{node}}")], "s"),
        ("Entries shipped/s by source", [
            q('sum by (node, source) (rate(tally_replication_entries_shipped_total{%s}[$__rate_interval]))' % SEL, "{{node}} {{source}}"),
        ], "ops"),
        ("Reconcile drift", [q('tally_reconcile_drift{%s}' % PAIR, "pair {{pair}} {{kind}}")], "none"),
        # Regions (docs/regions.md): empty on a cluster that runs alone.
        ("Peer regions: time since the last component applied", [
            q('tally_region_lag_seconds{%s} >= 0' % SEL, "{{instance}} from {{peer}}"),
        ], "s"),
        ("Peer regions: components pending and link up", [
            q('tally_region_components_pending{%s}' % SEL, "pending {{instance}} to {{peer}}"),
            q('tally_region_link_up{%s}' % SEL, "link up {{instance}} to {{peer}}"),
        ], "none"),
    ]),
    ("Disk and log", [
        ("Data directory free", [q('tally_data_dir_free_bytes{%s}' % SEL, "{{instance}}")], "bytes"),
        ("Log and write-ahead file size", [
            q('tally_log_size_bytes{%s}' % SEL, "log {{node}}"),
            q('tally_log_wal_bytes{%s}' % SEL, "wal {{node}}"),
        ], "bytes"),
        ("Log commit (fsync) p50 / p99", quantiles("tally_log_fsync_seconds", "node", ["node"]), "s"),
        ("Rows per commit", [
            q('sum by (node) (rate(tally_log_commit_batch_rows_sum{%s}[$__rate_interval])) / sum by (node) (rate(tally_log_commit_batch_rows_count{%s}[$__rate_interval]))' % (SEL, SEL), "{{node}}"),
        ], "none"),
        ("Entries past the checkpoint", [q('tally_log_last_lsn{%s} - tally_checkpoint_lsn{%s}' % (SEL, SEL), "{{node}}")], "none"),
        ("Idempotency keys in memory", [q('tally_dedup_keys{%s}' % SEL, "{{node}}")], "none"),
    ]),
    ("Processes", [
        ("CPU", [q('rate(process_cpu_seconds_total{%s}[$__rate_interval])' % SEL, "{{instance}}")], "percentunit"),
        ("Resident memory", [q('process_resident_memory_bytes{%s}' % SEL, "{{instance}}")], "bytes"),
        ("Event loop lag", [q('nodejs_eventloop_lag_seconds{%s}' % SEL, "{{instance}}")], "s"),
        ("Heap used", [q('nodejs_heap_size_used_bytes{%s}' % SEL, "{{instance}}")], "bytes"),
        ("Directory size", [
            q('tally_directory_counters{%s}' % SEL, "counters {{instance}}"),
            q('tally_directory_shards{%s}' % SEL, "shards {{instance}}"),
        ], "none"),
        ("Directory current (1) or refusing (0)", [q('tally_directory_fresh{%s}' % SEL, "{{instance}}")], "none"),
    ]),
]


def targets(queries):
    return [{"refId": chr(65 + n), "expr": one["expr"], "legendFormat": one["legend"], "datasource": DS} for n, one in enumerate(queries)]


def thresholds(steps):
    return {"mode": "absolute", "steps": [{"color": color, "value": value} for color, value in steps]}


panels = []
next_id = iter(range(1, 1000))
for index, (title, queries, unit, extra) in enumerate(stats):
    defaults = {"unit": unit, "thresholds": thresholds(extra["thresholds"]), "color": {"mode": "thresholds"}}
    if "noValue" in extra:
        defaults["noValue"] = extra["noValue"]
    panels.append({
        "id": next(next_id),
        "type": "stat",
        "title": title,
        "datasource": DS,
        "gridPos": {"h": 4, "w": 4, "x": index * 4, "y": 0},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "textMode": extra.get("textMode", "value_and_name"),
            "colorMode": "background",
            "graphMode": "none",
        },
        "targets": targets(queries),
    })
y = 4
for row_title, row_panels in rows:
    # A row has no queries; "targets": [] keeps every panel's shape the same for checks.
    panels.append({"id": next(next_id), "type": "row", "title": row_title, "collapsed": False, "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": [], "targets": []})
    y += 1
    for index, (title, queries, unit) in enumerate(row_panels):
        panels.append({
            "id": next(next_id),
            "type": "timeseries",
            "title": title,
            "datasource": DS,
            "gridPos": {"h": 8, "w": 8, "x": (index % 3) * 8, "y": y + (index // 3) * 8},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"legend": {"showLegend": True, "displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"]}},
            "targets": targets(queries),
        })
    y += ((len(row_panels) + 2) // 3) * 8


def variable(name, label, query, include_all=True):
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DS,
        "query": {"query": query, "refId": name},
        "definition": query,
        "refresh": 2,
        "multi": True,
        "includeAll": include_all,
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
    }


dashboard = {
    "uid": "tally",
    "title": "Tally",
    "description": "Tally on call: stat row first, then latency, replication, disk and processes. Generated by deploy/grafana/make-dashboard.py.",
    "tags": ["tally"],
    "timezone": "browser",
    "schemaVersion": 39,
    "version": 2,
    "refresh": "10s",
    "time": {"from": "now-1h", "to": "now"},
    "templating": {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus", "current": {"text": "Prometheus", "value": "prometheus"}},
        variable("job", "Job", 'label_values(up{job=~"tally.*"}, job)'),
        variable("instance", "Instance", 'label_values(up{job=~"$job"}, instance)'),
        variable("pair", "Pair", 'label_values(tally_pair_in_sync{job=~"$job"}, pair)'),
    ]},
    "panels": panels,
}
path = os.path.join(os.path.dirname(__file__), "dashboards", "tally.json")
with open(path, "w") as out:
    json.dump(dashboard, out, indent=2)
    out.write("\n")
