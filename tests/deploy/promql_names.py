"""Metric names used by PromQL expressions in the deployment files.

Used by the deploy tests and tests/e2e/test_prometheus.py to check that the
alert rules and the Grafana dashboard only use metrics `gpudoctor serve`
exports. A small scanner, not a PromQL parser: it drops string literals,
label matchers, grouping label lists, range/offset durations and Grafana
variables, then keeps identifiers that are not functions or keywords.
"""
import json
import re

import_yaml_error = None
try:
    import yaml
except ImportError as e:  # python3-yaml missing: callers skip
    yaml = None
    import_yaml_error = e

_KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
             "group_right", "offset", "bool", "inf", "nan", "atan2"}
_IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def _strip(expr):
    expr = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    expr = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*", "", expr)  # Grafana variables
    expr = re.sub(r"\{[^{}]*\}", "", expr)                             # label matchers
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)                             # [5m], [5m:1m]
    expr = re.sub(r"\boffset\s+-?[0-9smhdwy]+", "", expr)
    return expr


def metric_names(expr):
    """The set of metric names an expression selects."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*", expr, re.S)
    if m:  # Grafana variable query: label_values(SELECTOR, label)
        expr = m.group(1)
    elif re.fullmatch(r"\s*label_values\(\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*", expr):
        return set()
    text = _strip(expr)
    names = set()
    for tok in _IDENT.finditer(text):
        name = tok.group(0)
        rest = text[tok.end():].lstrip()
        if rest.startswith("("):  # function or aggregation
            continue
        if name.lower() in _KEYWORDS:
            continue
        names.add(name)
    return names


def rule_exprs(rules_path):
    """(alert name, expr) of every rule in a Prometheus rule file."""
    with open(rules_path) as f:
        doc = yaml.safe_load(f)
    return [(r.get("alert") or r.get("record"), r["expr"])
            for g in doc["groups"] for r in g["rules"]]


def dashboard_exprs(dashboard_path):
    """(where, expr) of every panel target and query variable."""
    with open(dashboard_path) as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((f"panel '{p.get('title')}' target {t.get('refId')}", t["expr"]))
            walk(p.get("panels", []))

    walk(dash.get("panels", []))
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            out.append((f"variable '{v['name']}'", q))
    return out


# Values a Grafana dashboard's variables take when its queries are sent to
# Prometheus directly ("All" of every variable).
GRAFANA_SUBSTITUTIONS = {
    "$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h",
    "$Hostname": ".*", "$instance": ".*", "$gpu": ".*",
}


def grafana_to_promql(expr):
    for k in sorted(GRAFANA_SUBSTITUTIONS, key=len, reverse=True):
        expr = expr.replace(k, GRAFANA_SUBSTITUTIONS[k])
    return expr


# Metrics that Prometheus itself produces for every target.
PROMETHEUS_SYNTHETIC = {"up", "scrape_duration_seconds", "scrape_samples_scraped",
                        "scrape_series_added", "scrape_samples_post_metric_relabeling"}
