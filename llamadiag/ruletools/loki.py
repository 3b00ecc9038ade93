"""The Sigma export converted by pySigma-backend-loki into one Loki ruler alert group
(`llamadiag rules export --format loki`): a LogQL line filter per rule, each alert labelled with
its llamadiag rule and linking its runbook page (the rule's page in docs/rules/)."""

from __future__ import annotations

from typing import Any

import yaml

from llamadiag.ruletools.sigma import SigmaExport

GROUP = "llamadiag"


def _backend(labels: dict[str, str]) -> Any:
    from sigma.backends.loki import LogQLBackend
    from sigma.pipelines.loki import CustomLogSourceTransformation
    from sigma.processing.pipeline import ProcessingItem, ProcessingPipeline

    pipeline = None
    if labels:  # the stream selector the operator's logs carry, instead of the backend's {job=~".+"}
        transformation = CustomLogSourceTransformation(selection=dict(labels))
        pipeline = ProcessingPipeline(name="llamadiag stream", items=[ProcessingItem(transformation=transformation)])
    return LogQLBackend(processing_pipeline=pipeline, case_sensitive=True)


def logql_queries(export: SigmaExport, labels: dict[str, str] | None = None) -> dict[str, str]:
    """Each exported rule's LogQL query, by llamadiag rule id."""
    from sigma.collection import SigmaCollection

    backend = _backend(labels or {})
    out = {}
    for rule_id, doc in zip(export.rule_ids, export.rules, strict=True):
        (query,) = backend.convert(SigmaCollection.from_dicts([doc]))
        out[rule_id] = query
    return out


def loki_ruler(export: SigmaExport, docs_url: str, labels: dict[str, str] | None = None) -> str:
    """One ruler group (YAML) of alerts, converted rule by rule with the backend's ruler format."""
    from sigma.collection import SigmaCollection

    backend = _backend(labels or {})
    rules = []
    for rule_id, doc in zip(export.rule_ids, export.rules, strict=True):
        converted = backend.convert(SigmaCollection.from_dicts([doc]), "ruler")
        group = yaml.safe_load(converted if isinstance(converted, str) else "\n".join(converted))
        for alert in group["groups"][0]["rules"]:
            alert["labels"]["llamadiag_rule"] = rule_id
            alert["annotations"]["runbook_url"] = f"{docs_url.rstrip('/')}/{rule_id}.md"
            alert["annotations"]["next_step"] = "llamadiag explain on this instance's log"
            rules.append(alert)
    return yaml.safe_dump(
        {"groups": [{"name": GROUP, "rules": rules}]}, sort_keys=False, allow_unicode=True, width=1000
    )
