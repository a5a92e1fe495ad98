"""The alert rules and the Grafana dashboard (issue 61, item 4): promtool
accepts the rules, and every metric they and the dashboard name is one the
platform exports (core/metrics.py, grader/metrics.py) or Prometheus's own ``up``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client import Counter, Histogram

from core import metrics

ROOT = Path(__file__).resolve().parents[1]
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARDS = sorted((ROOT / "deploy" / "grafana").glob("*.json"))
METRIC_NAME = re.compile(r"\b(dojo_[a-z_]+|up)\b(?![\s]*\()")


def exported_names() -> set[str]:
    names = {"up"}
    for value in vars(metrics).values():
        if isinstance(value, Counter):
            names.add(f"{value._name}_total")
        elif isinstance(value, Histogram):
            names |= {f"{value._name}_{suffix}" for suffix in ("bucket", "count", "sum")}
    # Read at scrape time (grader/metrics.py).
    from grader.metrics import ScrapeTimeCollector

    source = (ROOT / "grader" / "metrics.py").read_text()
    assert ScrapeTimeCollector.__name__ in source
    names |= set(re.findall(r'GaugeMetricFamily\(\s*"(dojo_[a-z_]+)"', source))
    return names


def named_metrics(expr: str) -> set[str]:
    # Label names inside {...} and by (...) are not metrics.
    without_labels = re.sub(r"\{[^}]*\}|\b(by|without)\s*\([^)]*\)", " ", expr)
    return set(METRIC_NAME.findall(without_labels))


def test_promtool_accepts_the_alert_rules():
    promtool = shutil.which("promtool")
    if promtool is None:
        # make test's bootstrap installs it wherever it can install packages (root with apt): missing there is a failure.
        if os.environ.get("CI") or (shutil.which("apt-get") and os.geteuid() == 0):
            pytest.fail("promtool is missing: scripts/bootstrap.sh installs Debian's prometheus package, which ships it")
        pytest.skip("promtool is not installed and cannot be here (not root, or no apt): apt-get install prometheus")
    checked = subprocess.run([promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_metric_the_alerts_and_the_dashboard_name_is_exported():
    exported = exported_names()
    exprs = [rule["expr"] for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]
    assert len(exprs) >= 5
    assert DASHBOARDS, "no Grafana dashboard in deploy/grafana/"
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text())
        exprs += [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    unknown = {name: expr for expr in exprs for name in named_metrics(expr) - exported}
    assert not unknown, f"metrics named but not exported: {unknown}"
    assert {"dojo_queue_depth", "dojo_jobs_total", "dojo_infra_errors_total", "dojo_lti_passback_failures_total", "dojo_slow_requests_total"} <= {
        name for expr in exprs for name in named_metrics(expr)
    }


def test_what_to_watch_names_every_alert_and_only_exported_metrics():
    """docs/operations.md's "What to watch" explains each alert of alerts.yml, and every metric the guide names exists."""
    guide = (ROOT / "docs" / "operations.md").read_text()
    watch = guide.split("## What to watch\n", 1)[1].split("\n## ", 1)[0]
    alerts = {rule["alert"] for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]}
    assert alerts and not {alert for alert in alerts if f"`{alert}`" not in watch}, "an alert the guide does not explain"
    assert not set(re.findall(r"`(Dojo[A-Za-z]+)`", watch)) - alerts, "the guide names an alert alerts.yml lacks"
    named = set(re.findall(r"\b(dojo_[a-z_]+)", guide))
    assert {"dojo_queue_depth", "dojo_busy_refusals_total", "dojo_infra_errors_total"} <= named
    exported = exported_names()
    unknown = {name for name in named if name not in exported and not {f"{name}_count", f"{name}_total"} & exported}
    assert not unknown, f"docs/operations.md names metrics that are not exported: {unknown}"
