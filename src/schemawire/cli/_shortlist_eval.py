"""``schemawire shortlist --eval CASES.jsonl``: every query of a file over one index, the
figures (recall@k, all-gold@k, MRR@10) and the worst misses, as a table, JSON or JUnit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from schemawire._json import quoted
from schemawire.cli._output import EXIT_FINDINGS, EXIT_INPUT, fail, print_json, stderr, stdout

if TYPE_CHECKING:
    from schemawire.application._shortlist_eval import CaseOutcome, EvalReport
    from schemawire.errors import InputError
    from schemawire.gates.shortlist import ToolIndex
    from schemawire.types import ToolSpec

__all__ = ["EvalOptions", "evaluate_cases"]


@dataclass(frozen=True)
class EvalOptions:
    """What ``--eval`` was given besides the file."""

    top: int
    junit: Path | None
    worst: int
    min_recall: float | None
    json: bool


def evaluate_cases(
    index: ToolIndex, specs: list[ToolSpec], path: Path, options: EvalOptions
) -> None:
    """Run the cases of ``path``; exit 2 when the file cannot be used, 1 when a query misses."""
    from schemawire.application._shortlist_eval import evaluate, read_cases

    cases, problems = read_cases(path.read_bytes(), str(path), {spec.name for spec in specs})
    if problems:
        _refuse_cases(problems, json=options.json)
    if not cases:
        fail(f"{path}: no case to evaluate: write one JSON line per query, {_CASE_EXAMPLE}")
    report = evaluate(index, cases, k=options.top)
    if options.junit is not None:
        _write_junit(report, path, options.junit, options.min_recall)
    if options.json:
        print_json({"file": str(path), **report.to_json(options.worst)})
    else:
        _print_report(report, path, options.worst)
    if _failed(report, options.min_recall):
        if options.min_recall is not None:
            stderr.print(f"[yellow]{escape(_bar(report, options.min_recall))}[/]")
        raise typer.Exit(EXIT_FINDINGS)


_CASE_EXAMPLE = '{"query": "refund an order", "answer": ["create_refund"]}'


def _refuse_cases(problems: list[InputError], *, json: bool) -> None:
    """Say what is wrong with every unusable line; exit 2 (none is counted as a miss)."""
    if json:
        print_json({"errors": [problem.to_json() for problem in problems]})
    for problem in problems:
        # ``source:line[:column] #pointer: message``: the line of the file, and where in it.
        stderr.print(f"[bold red]error:[/] {escape(problem.location)}: {escape(problem.message)}")
    lines = len({problem.line for problem in problems})
    found = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    stderr.print(
        f"{found} on {lines} unusable line{'s' if lines != 1 else ''}: fix them; "
        "nothing was evaluated"
    )
    raise typer.Exit(EXIT_INPUT)


def _failed(report: EvalReport, min_recall: float | None) -> bool:
    if min_recall is not None:
        return report.recall(report.k) < min_recall
    return bool(report.misses())


def _bar(report: EvalReport, min_recall: float) -> str:
    """``recall@10 0.889 < --min-recall 0.9``: the bar, and which side of it the run is."""
    recall = report.recall(report.k)
    side = "<" if recall < min_recall else ">="
    return f"recall@{report.k} {recall:.3f} {side} --min-recall {min_recall:g}"


def _print_report(report: EvalReport, path: Path, worst: int) -> None:
    cases = len(report.outcomes)
    stdout.print(
        f"[bold]{escape(str(path))}[/]: {cases} case{'s' if cases != 1 else ''} over "
        f"{report.catalogue_size} tool definitions, k = {report.k}"
    )
    table = Table()
    table.add_column("")
    for k in report.ks:
        table.add_column(f"@{k}", justify="right")
    table.add_row("recall", *(f"{report.recall(k):.3f}" for k in report.ks))
    table.add_row("all gold", *(f"{report.all_gold(k):.3f}" for k in report.ks))
    stdout.print(table)
    stdout.print(
        f"MRR@10 {report.mrr():.3f}   query ms p50 {report.query_ms(0.5):.3f} "
        f"p95 {report.query_ms(0.95):.3f}"
    )
    misses = report.misses()
    style = "green" if not misses else "yellow"
    stdout.print(f"[{style}]{len(misses)} of {cases} missed a tool in the top {report.k}[/]")
    for outcome in misses[:worst]:
        _print_miss(outcome, report.k)


def _print_miss(outcome: CaseOutcome, k: int) -> None:
    case = outcome.case
    first = outcome.first_gold()
    place = f"first gold at {first}" if first is not None else "no gold ranked"
    stdout.print(f"  line {case.line}: {escape(quoted(case.query))}")
    stdout.print(f"    missing {escape(', '.join(outcome.missing_at(k)))} ({place})")
    ranked = ", ".join(outcome.ranking[:k]) or "nothing matched"
    stdout.print(f"    ranked  {escape(ranked)}")


def _write_junit(report: EvalReport, path: Path, out: Path, min_recall: float | None) -> None:
    """A testcase per query, failed when it misses a gold tool; under --min-recall the misses
    are skipped (why, in system-out) and one more testcase, the bar, passes or fails: the file
    fails exactly when the exit code does."""
    from schemawire.evals.expect import Failure
    from schemawire.evals.junit import junit_xml
    from schemawire.evals.runner import CaseResult, CaseStatus

    results = []
    for outcome in report.outcomes:
        case, missing = outcome.case, outcome.missing_at(report.k)
        failures = [Failure(_miss(outcome, report.k), "/answer", case.line, 1)] if missing else []
        name = f"line {case.line}: {case.query[:80]}"
        status: CaseStatus = "failed" if failures else "passed"
        results.append(CaseResult(path, name, status, failures, seconds=outcome.seconds))
    if min_recall is not None:
        below = _failed(report, min_recall)
        failed = [Failure(_bar(report, min_recall), "", 0, 0)] if below else []
        bar: CaseStatus = "failed" if below else "passed"
        results.append(CaseResult(path, f"recall@{report.k} >= {min_recall:g}", bar, failed))
    xml = junit_xml(results, suite=f"schemawire shortlist --eval {path.name}")
    if min_recall is not None:
        xml = _misses_skipped(xml, len(report.outcomes))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(xml, "utf-8")


def _miss(outcome: CaseOutcome, k: int) -> str:
    ranked = ", ".join(outcome.ranking[:k]) or "nothing"
    return (
        f"{', '.join(outcome.missing_at(k))} not in the top {k}; ranked: {ranked}"
        f" (the query: {quoted(outcome.case.query)})"
    )


def _misses_skipped(xml: str, queries: int) -> str:
    """``xml`` with the failure of each of the first ``queries`` testcases turned into a
    ``skipped`` whose ``system-out`` holds what the failure said (the bar's testcase, after
    them, decides)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml)
    suite = root.find("testsuite")
    assert suite is not None  # junit_xml writes one
    skipped = 0
    for testcase in suite.findall("testcase")[:queries]:
        failure = testcase.find("failure")
        if failure is None:
            continue
        testcase.remove(failure)
        ET.SubElement(testcase, "skipped", message="missed a tool; --min-recall holds the bar")
        ET.SubElement(testcase, "system-out").text = failure.text
        skipped += 1
    suite.set("failures", str(int(suite.get("failures", "0")) - skipped))
    suite.set("skipped", str(skipped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
