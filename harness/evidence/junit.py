"""JUnit XML of an evidence pack's verdicts, for CI systems (``junit.xml`` in the pack, ``xocdia-hil evidence
junit``): one ``testsuite`` for the run (its properties: report id, bench, suite version), each scenario a
``testcase`` (``classname`` its feature file when known, else ``xocdia``) whose properties are its clauses
(``clause`` = the clause id, one property each, and ``clause:ID`` = ``checked`` or ``not checked``); a failed
scenario carries a ``failure`` naming the clauses whose check failed, a not applicable one a ``skipped`` with the
reason."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

JUNIT_FILE = "junit.xml"


def junit_xml(verdicts: dict[str, Any], manifest: dict[str, Any]) -> bytes:
    """The JUnit XML document (UTF-8, with its declaration) of a pack's ``verdicts.json`` and manifest."""
    scenarios: dict[str, dict[str, Any]] = verdicts.get("scenarios", {})
    failed = sum(1 for s in scenarios.values() if s.get("outcome") == "failed")
    skipped = sum(1 for s in scenarios.values() if s.get("outcome") not in ("passed", "failed"))
    attrs = {"tests": str(len(scenarios)), "failures": str(failed), "errors": "0", "skipped": str(skipped)}
    root = ET.Element("testsuites", {"name": "xocdia-hil certify", **attrs})
    bench = manifest.get("bench", {})
    suite = ET.SubElement(
        root,
        "testsuite",
        {"name": f"certify on {bench.get('name', '?')}", "timestamp": str(manifest.get("started_at", "")), **attrs},
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("report_id", manifest.get("report_id", "")),
        ("bench", bench.get("name", "")),
        ("suite_version", manifest.get("suite", {}).get("version", "")),
        ("verdict", verdicts.get("verdict", "")),
    ):
        ET.SubElement(props, "property", {"name": name, "value": str(value)})
    for nodeid, entry in scenarios.items():
        where = str(entry.get("where") or "")
        classname = where.split(":", 1)[0] if where else "xocdia"
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": str(entry.get("scenario", nodeid))})
        case_props = ET.SubElement(case, "properties")
        ET.SubElement(case_props, "property", {"name": "nodeid", "value": nodeid})
        for clause, checked in entry.get("clauses", {}).items():
            ET.SubElement(case_props, "property", {"name": "clause", "value": clause})
            ET.SubElement(case_props, "property", {"name": f"clause:{clause}", "value": str(checked)})
        outcome = entry.get("outcome")
        if outcome == "failed":
            clauses = ", ".join(entry.get("failed_clauses", [])) or "outside any clause check"
            ET.SubElement(case, "failure", {"message": f"failed: {clauses}", "type": "scenario failed"})
        elif outcome != "passed":
            ET.SubElement(case, "skipped", {"message": f"{outcome}: {entry.get('reason', '')}".rstrip(": ")})
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
