"""``schemawire shortlist``: one query over a catalogue, or an evaluation of many.

The catalogue is a repository's canonical schemas (``--repo``, the default), an MCP server's
listing (the command after ``--``, or ``--url``) or a file of tool definitions (``--tools``).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer
from rich.markup import escape
from rich.table import Table

from schemawire._json import quoted
from schemawire.cli._output import (
    EXIT_FINDINGS,
    MachineJson,
    fail,
    guarded,
    print_json,
    stderr,
    stdout,
)
from schemawire.cli._server_options import Headers, Timeout, Token, Url
from schemawire.cli._shortlist_eval import EvalOptions, evaluate_cases
from schemawire.errors import UsageError

if TYPE_CHECKING:
    from schemawire.gates.shortlist import Shortlist, ShortlistedTool, ToolIndex
    from schemawire.types import ToolSpec

__all__ = ["shortlist_command"]

_QUERY_TOP, _EVAL_TOP, _WORST = 5, 10, 5

Arguments = Annotated[
    list[str] | None,
    typer.Argument(
        help="The query (quote it: every word after it is read as an MCP server's command, "
        "stdio, `--` or not).",
        metavar="QUERY [-- CMD...]",
        show_default=False,
    ),
]
Repo = Annotated[
    Path | None,
    typer.Option("--repo", help="A schema repository: its tools' canonical schemas (default: .)."),
]
ToolsFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--tools",
        help="A file of tool definitions: MCP tools/list JSON, or JSON Lines of "
        "{name, description, inputSchema} (repeatable: one catalogue of several servers).",
    ),
]
Top = Annotated[
    int | None,
    typer.Option(
        "--top",
        "-k",
        min=1,
        help="How many ranked tools a shortlist holds (default: 5; with --eval, 10).",
        show_default=False,
    ),
]
Pins = Annotated[
    list[str] | None,
    typer.Option("--pin", help="A tool every shortlist lists, whatever the query (repeatable)."),
]
EvalFile = Annotated[
    Path | None,
    typer.Option(
        "--eval",
        help='Evaluate: JSON Lines of {"query": ..., "answer": \\[tool names]}; print recall@k, '
        "all-gold@k and MRR@10.",
    ),
]
JUnit = Annotated[
    Path | None,
    typer.Option("--junit", help="With --eval: a JUnit XML testcase per query, written here."),
]
Worst = Annotated[
    int, typer.Option("--worst", min=0, help="With --eval: how many of the worst misses to show.")
]
Semantic = Annotated[
    bool,
    typer.Option(
        "--semantic",
        help="Rank by meaning too: BM25 fused with the schemawire\\[semantic] extra's embedder.",
    ),
]
MinRecall = Annotated[
    float | None,
    typer.Option(
        "--min-recall",
        min=0.0,
        max=1.0,
        help="With --eval: exit 0 when recall@k is at least this, even if some queries miss "
        "(with --junit the misses are skipped and one testcase holds the bar).",
        show_default=False,
    ),
]


@guarded
def shortlist_command(
    arguments: Arguments = None,
    repo: Repo = None,
    url: Url = None,
    header: Headers = None,
    token: Token = None,
    tools: ToolsFiles = None,
    top: Top = None,
    pin: Pins = None,
    eval_file: EvalFile = None,
    junit: JUnit = None,
    worst: Worst = _WORST,
    min_recall: MinRecall = None,
    semantic: Semantic = False,
    timeout: Timeout = 30.0,
    json: MachineJson = False,
) -> None:
    """Shortlist a catalogue's tools for a query: the ones a model should see, ranked, with
    the fields that matched and how complete the list is (--json: the shortlist JSON of
    gates/shortlist.schema.json). The counts are of tools that share a word with the query;
    with --semantic, tools found by meaning alone are listed too and counted apart. Exit 0
    when a tool other than the pinned ones is listed (by a shared word or, with --semantic, by
    meaning), 1 when none is (the hint says what to try), 2 on unusable input.

    With --eval CASES.jsonl, run every query of the file and print recall@1/3/5/10,
    all-gold@k and MRR@10 and the worst misses. Exit 0 when every query finds all its tools in
    the top k (or recall@k reaches --min-recall), 1 when not, 2 when the file cannot be used:
    a line that is not JSON, has no query, or names a tool the catalogue lacks, or no case.
    """
    words = list(arguments or [])
    if eval_file is None:
        _refuse_eval_options(junit=junit, min_recall=min_recall, worst=worst)
        if not words:
            raise UsageError("give the query, e.g. schemawire shortlist 'refund an order'")
        query, command = words[0], words[1:]
    else:
        if pin:
            raise UsageError(
                "--pin with --eval: a pinned tool is listed whatever the query, so the figures "
                "would not measure the ranking; evaluate without it"
            )
        query, command = None, words  # with --eval every argument is the server's command
    _refuse_words_as_command(command, repo=repo, url=url, tools=tools, query=query)
    specs, sources = _catalogue(
        repo=repo,
        command=command,
        url=url,
        header=header,
        token=token,
        tools=tools,
        timeout=timeout,
    )
    from schemawire.gates import ToolIndex, semantic_embedder

    _refuse_unknown_pins(pin or (), specs)
    embedder = semantic_embedder() if semantic else None
    index = ToolIndex(specs, pinned=pin or (), sources=sources, embedder=embedder)
    if query is not None:
        _answer(index, query, top or _QUERY_TOP, json=json)
    else:
        assert eval_file is not None
        options = EvalOptions(top or _EVAL_TOP, junit, worst, min_recall, json)
        evaluate_cases(index, specs, eval_file, options)


def _refuse_eval_options(*, junit: Path | None, min_recall: float | None, worst: int) -> None:
    given = [
        option
        for option, value in (
            ("--junit", junit is not None),
            ("--min-recall", min_recall is not None),
            ("--worst", worst != _WORST),
        )
        if value
    ]
    if given:
        raise UsageError(f"{', '.join(given)}: only with --eval CASES.jsonl")


def _refuse_words_as_command(
    command: list[str],
    *,
    repo: Path | None,
    url: str | None,
    tools: list[Path] | None,
    query: str | None,
) -> None:
    """Refuse words read as a server's command beside another catalogue: every word after the
    query (with --eval, every word) is the command, ``--`` or not, so an unquoted query of
    several words lands here.

    Raises:
        UsageError: there are such words and --repo, --url or --tools was given too.
    """
    given = [
        name for name, value in (("--repo", repo), ("--url", url), ("--tools", tools)) if value
    ]
    if not command or not given:
        return
    read = " ".join(quoted(word) for word in command)
    if query is None:
        raise UsageError(
            f"with --eval no query is taken: {read} was read as an MCP server's command, "
            f"beside {given[0]}; drop it, or give the server alone after --"
        )
    raise UsageError(
        f"{read} was read as an MCP server's command (every word after the query is one), "
        f"beside {given[0]}: quote the whole query, e.g. "
        f"schemawire shortlist {quoted(' '.join([query, *command]))} {given[0]} ..."
    )


def _refuse_unknown_pins(pins: Sequence[str], specs: Sequence[ToolSpec]) -> None:
    """Refuse a --pin the catalogue lacks, with the names it may have meant.

    Raises:
        UsageError: one is unknown.
    """
    names = sorted({spec.name for spec in specs})
    unknown = [pin for pin in dict.fromkeys(pins) if pin not in set(names)]
    if not unknown:
        return
    parts = []
    for pin in unknown:
        close = difflib.get_close_matches(pin, names, n=3)
        meant = f" (did you mean {' or '.join(map(quoted, close))}?)" if close else ""
        parts.append(f"{quoted(pin)}{meant}")
    raise UsageError(
        f"--pin names tools the catalogue does not have: {', '.join(parts)}; "
        "schemawire tools lists a server's names, and schemawire shortlist QUERY --json "
        "shows the ones that match a query"
    )


# --- the catalogue ---------------------------------------------------------------------------


def _catalogue(
    *,
    repo: Path | None,
    command: list[str],
    url: str | None,
    header: list[str] | None,
    token: str | None,
    tools: list[Path] | None,
    timeout: float,
) -> tuple[list[ToolSpec], dict[str, str]]:
    """The catalogue's tool specs, and the source of each tool by name.

    Raises:
        UsageError: more than one catalogue was given, or the one given holds no tool.
    """
    given = [
        option
        for option, value in (
            ("--repo", repo is not None),
            ("a server after --", bool(command)),
            ("--url", url is not None),
            ("--tools", bool(tools)),
        )
        if value
    ]
    if len(given) > 1:
        raise UsageError(f"one catalogue at a time, not {' and '.join(given)}")
    if command or url:
        specs, label = _server_catalogue(command, url, header, token, timeout)
        sources = {spec.name: label for spec in specs}
        advice = "the server lists none"
    elif tools:
        specs, sources = _files_catalogue(tools)
        label = ", ".join(str(path) for path in tools)
        advice = "check that the file is the tools/list you meant"
    else:
        specs, label = _repository_catalogue(repo or Path("."), given=repo is not None)
        sources = {spec.name: label for spec in specs}
        advice = (
            "write a tool's input schema under schemas/tools/ (schemawire init example shows "
            f"some), or give {_OTHER_CATALOGUES}"
        )
    if not specs:
        raise UsageError(f"{label} holds no tool to shortlist: {advice}")
    return specs, sources


_OTHER_CATALOGUES = "--tools FILE (a tools/list JSON), or an MCP server's command after --"


def _repository_catalogue(directory: Path, *, given: bool) -> tuple[list[ToolSpec], str]:
    """The repository's tools, and its name.

    Raises:
        UsageError: ``directory`` is not a directory, or not in a schemawire repository.
    """
    from schemawire.schema.repository import Repository

    where = f"--repo {quoted(str(directory))}" if given else "the current directory"
    if not directory.is_dir():
        raise UsageError(
            f"{where} is not a directory: give a schemawire repository's, or {_OTHER_CATALOGUES}"
        )
    repository = Repository.load(directory)
    if repository.config.source is None:
        raise UsageError(
            f"{where} is not in a schemawire repository (no schemawire.toml, nor a "
            f"[tool.schemawire] table in pyproject.toml, here or above): give one "
            f"(schemawire init makes one), or {_OTHER_CATALOGUES}"
        )
    return list(repository.tools()), repository.root.resolve().name or "repository"


def _files_catalogue(paths: list[Path]) -> tuple[list[ToolSpec], dict[str, str]]:
    """Every tool of the files, and each one's source: its file's name without the suffix, or
    its path without the suffix when two files share a name (a name several files define
    counts for the last).

    Raises:
        UsageError: a path is given twice, or is not a file.
    """
    from schemawire.application._shortlist_eval import read_catalogue

    _refuse_unusable_paths(paths)
    stems = Counter(path.stem for path in paths)
    specs: list[ToolSpec] = []
    sources: dict[str, str] = {}
    for path in paths:
        read = read_catalogue(path.read_bytes(), str(path))
        label = path.stem if stems[path.stem] == 1 else str(path.with_suffix(""))
        specs += read
        sources.update((spec.name, label) for spec in read)
    return specs, sources


def _refuse_unusable_paths(paths: list[Path]) -> None:
    seen: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir():
            raise UsageError(
                f"--tools {quoted(str(path))} is a directory: it needs a file of tool "
                "definitions (MCP tools/list JSON, or JSON Lines of {name, description, "
                "inputSchema}); give each file with its own --tools"
            )
        resolved = path.resolve()
        if resolved in seen:
            raise UsageError(
                f"--tools {quoted(str(path))} is given twice (as {quoted(str(seen[resolved]))} "
                "too): its tools would count twice; give each file once"
            )
        seen[resolved] = path


def _server_catalogue(
    command: list[str], url: str | None, header: list[str] | None, token: str | None, timeout: float
) -> tuple[list[ToolSpec], str]:
    from schemawire.cli._mcp import _address, _list, _server_errors
    from schemawire.mcp import ServerError

    address = _address(command, url, header, token)
    with _server_errors():
        try:
            listed, info = anyio.run(_list, address, timeout, None)
        except ServerError as error:
            if error.code == "not_started" and command:
                # `schemawire shortlist refund order` runs "order" as a server: say why.
                fail(
                    f"MCP server {error.server}: {error.reason}; check the command after `--` "
                    f"(if {quoted(command[0])} is a word of the query, quote the whole query)"
                )
            raise
    for tool in listed:
        if tool.spec is None:
            stderr.print(
                f"[yellow]left out[/] {escape(tool.name)}: {escape(tool.problem or 'unusable')}"
            )
    label = (info["serverInfo"] or {}).get("name") or info["label"]
    return [tool.spec for tool in listed if tool.spec is not None], str(label)


# --- one query -------------------------------------------------------------------------------


def _answer(index: ToolIndex, query: str, top: int, *, json: bool) -> None:
    """Print the shortlist for ``query``; exit 1 when it lists no tool but the pinned ones."""
    shortlist = index.search(query, k=top)
    if json:
        print_json(shortlist.to_json())
    else:
        _print_shortlist(shortlist)
    if not any(not tool.pinned for tool in shortlist.tools):
        raise typer.Exit(EXIT_FINDINGS)


def _print_shortlist(shortlist: Shortlist) -> None:
    table = Table(title=f"shortlist for {escape(quoted(shortlist.query))}")
    table.add_column("rank", justify="right")
    table.add_column("tool", overflow="fold")  # a name is shown whole, if on two lines
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("matched")
    table.add_column("pinned")
    rank = 0
    for tool in shortlist.tools:
        rank += 0 if tool.pinned else 1
        table.add_row(
            "" if tool.pinned else str(rank),
            escape(tool.name),
            f"{tool.score:.3f}",
            escape(", ".join(tool.matched)) or _unmatched(shortlist, tool),
            "pinned" if tool.pinned else "",
        )
    if shortlist.tools:
        stdout.print(table)
    stdout.print(_completeness(shortlist))
    if shortlist.hint:
        stdout.print(f"[yellow]hint:[/] {escape(shortlist.hint)}")


def _unmatched(shortlist: Shortlist, tool: ShortlistedTool) -> str:
    """The matched cell of a tool that shares no word with the query."""
    if not tool.pinned and shortlist.ranker != "bm25":
        return "[dim]by meaning[/]"
    return "[dim]nothing[/]"


def _completeness(shortlist: Shortlist) -> str:
    """One line: how many tools share a word with the query, how many are listed, and how
    many more are listed by meaning alone."""
    size = shortlist.catalogue_size
    catalogue = f"(catalogue: {size} tool{'s' if size != 1 else ''})"
    meaning = shortlist.by_meaning
    if shortlist.total_matches == 0:
        if meaning:
            return (
                f"[yellow]no tool shares a word with the query[/]; {meaning} listed by meaning "
                f"alone {catalogue}"
            )
        return f"[yellow]no tool matched[/] {catalogue}"
    also = f", and {meaning} more by meaning alone" if meaning else ""
    line = (
        f"returned {shortlist.returned} of {shortlist.total_matches} matching tools{also} "
        f"{catalogue}"
    )
    if shortlist.truncated:
        more = shortlist.total_matches - shortlist.returned
        return f"{line}; [yellow]truncated[/]: {more} more matched, raise --top to see them"
    return f"{line}; complete: every matching tool is listed"
