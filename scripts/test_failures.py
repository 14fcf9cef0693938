"""Print the start of each failed test's message, from the reports the suites leave.

`scripts/test-suites.sh` calls it last, so that a CI log's tail names each failure and
why, however long the output before it (Playwright lists every attachment of a failed
test, which pushes its error far up). Reads pytest's JUnit XML (`artifacts/junit-*.xml`)
and Playwright's JSON report (`artifacts/ui-results.json`); standard library only.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

LINES = 12
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def excerpt(text: str) -> str:
    lines = [line for line in ANSI.sub("", text or "").splitlines() if line.strip()]
    return "\n".join(f"      {line[:200]}" for line in lines[:LINES])


def junit_failures(report: Path):
    # The file is the one pytest just wrote here, not outside input.
    for case in ET.parse(report).getroot().iter("testcase"):  # noqa: S314
        for problem in (*case.findall("failure"), *case.findall("error")):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            yield name, problem.get("message") or problem.text or ""


def playwright_failures(report: Path):
    def walk(suite, titles):
        for child in suite.get("suites", []):
            yield from walk(child, [*titles, child.get("title", "")])
        for spec in suite.get("specs", []):
            for test in spec.get("tests", []):
                for result in test.get("results", []):
                    if result.get("status") not in ("passed", "skipped"):
                        errors = result.get("errors") or [result.get("error") or {}]
                        message = "\n".join(e.get("message", "") for e in errors)
                        yield " > ".join(t for t in [*titles, spec.get("title", "")] if t), message

    data = json.loads(report.read_text())
    for suite in data.get("suites", []):
        yield from walk(suite, [suite.get("title", "")])


def main(folder: Path) -> None:
    found = []
    for report in sorted(folder.glob("junit-*.xml")):
        found += [(report.stem[6:], *failure) for failure in junit_failures(report)]
    ui = folder / "ui-results.json"
    if ui.exists():
        found += [("test-ui", *failure) for failure in playwright_failures(ui)]
    if not found:
        return
    print(f"\n==> {len(found)} failed test(s)")
    for suite, name, message in found:
        print(f"  [{suite}] {name}\n{excerpt(message)}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "artifacts"))
