"""`schema.repository`: discovery, identity, versions and local-only reference resolution."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from schemawire.errors import ConfigError, ErrorCode
from schemawire.schema.config import load_config
from schemawire.schema.repository import Repository
from tests.helpers import EXAMPLES, WriteRepo, tool_schema


def rule_ids(repository: Repository) -> list[tuple[str, str, str]]:
    return [(f.rule.id, f.file, f.pointer) for f in repository.findings]


def test_example_repository_loads_clean() -> None:
    repository = Repository.load(EXAMPLES / "support-desk")
    assert repository.findings == ()
    assert {f.kind for f in repository.files} == {"tools", "handoffs", "state", "common"}


def test_tools_are_named_by_file_stem_with_their_output_schema() -> None:
    tools = {tool.name: tool for tool in Repository.load(EXAMPLES / "support-desk").tools()}
    assert set(tools) == {"get_weather", "create_refund"}
    refund = tools["create_refund"]
    assert refund.schema_id == "https://example.com/schemas/tools/create_refund.json"
    assert refund.version == "1.0.0"
    assert refund.output_schema is not None
    assert refund.output_schema["$id"].endswith("create_refund.output.json")
    assert refund.annotations == {"version": "1.0.0"}


def test_finds_schemas_by_id_path_and_tool_name() -> None:
    repository = Repository.load(EXAMPLES / "support-desk")
    by_id = repository.find("https://example.com/schemas/tools/get_weather.json")
    assert by_id is not None
    assert repository.find("schemas/tools/get_weather.json") is by_id
    assert repository.find("get_weather") is by_id
    assert repository.find("tools/get_weather.output") is not None
    assert repository.find("nothing") is None


def test_root_is_found_upwards_from_a_subdirectory() -> None:
    repository = Repository.load(EXAMPLES / "support-desk" / "schemas" / "tools")
    assert repository.root == (EXAMPLES / "support-desk").resolve()


def test_reads_settings_from_pyproject(write_repo: WriteRepo) -> None:
    root = write_repo(
        {
            "pyproject.toml": '[tool.schemawire.repository]\ntools = "agent/tools"\n',
            "agent/tools/ping.json": tool_schema("ping"),
        }
    )
    repository = Repository.load(root / "agent")
    assert [f.relpath for f in repository.files] == ["agent/tools/ping.json"]


def test_settings_typo_is_an_error_that_suggests_the_key(write_repo: WriteRepo) -> None:
    root = write_repo({"schemawire.toml": '[lint]\nignor = ["SW101"]\n'})
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    assert caught.value.code == ErrorCode.CONFIG_INVALID
    assert '(did you mean "ignore"?)' in caught.value.message


def test_settings_that_are_not_toml_are_an_error(write_repo: WriteRepo) -> None:
    root = write_repo({"schemawire.toml": "[lint\n"})
    with pytest.raises(ConfigError):
        load_config(root)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"$id": None}, ("SW005", "")),
        ({"$id": "schemas/tools/t.json"}, ("SW006", "/$id")),
        ({"$id": "https://example.com/schemas/tools/t.json#main"}, ("SW006", "/$id")),
        ({"$id": "https://example.com/schemas/t.json"}, ("SW007", "/$id")),
        ({"x-version": None}, ("SW009", "")),
        ({"x-version": "1.0"}, ("SW010", "/x-version")),
        ({"x-version": 1}, ("SW010", "/x-version")),
        ({"$schema": "http://json-schema.org/draft-04/schema#"}, ("SW003", "/$schema")),
        ({"type": "dict"}, ("SW004", "/type")),
        ({"required": "city"}, ("SW004", "/required")),
    ],
)
def test_identity_version_and_dialect_rules(
    write_repo: WriteRepo, overrides: dict[str, Any], expected: tuple[str, str]
) -> None:
    root = write_repo(
        {
            "schemawire.toml": '[repository]\nid-base = "https://example.com/"\n',
            "schemas/tools/t.json": tool_schema("t", **overrides),
        }
    )
    findings = [(rule, pointer) for rule, _, pointer in rule_ids(Repository.load(root))]
    assert findings == [expected]


def test_draft_07_schemas_are_checked_against_the_draft_07_metaschema(
    write_repo: WriteRepo,
) -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    root = write_repo(
        {
            "schemas/tools/ok.json": tool_schema("ok", **{"$schema": draft7}),
            "schemas/tools/old.json": tool_schema(
                "old",
                **{
                    "$schema": draft7,
                    "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
                },
            ),
        }
    )
    assert rule_ids(Repository.load(root)) == [
        ("SW004", "schemas/tools/old.json", "/properties/n/exclusiveMinimum")
    ]


def test_duplicate_ids_and_names_are_errors(write_repo: WriteRepo) -> None:
    root = write_repo(
        {
            "schemas/tools/a.json": tool_schema("a"),
            "schemas/tools/b.json": tool_schema("a"),
            "schemas/tools/more/a.json": tool_schema("a2"),
            "schemas/tools/ghost.output.json": tool_schema("ghost.output"),
        }
    )
    assert sorted(rule_ids(Repository.load(root))) == [
        ("SW008", "schemas/tools/b.json", "/$id"),
        ("SW012", "schemas/tools/ghost.output.json", ""),
        ("SW013", "schemas/tools/more/a.json", ""),
    ]


def test_one_bad_file_hides_none_of_the_others(write_repo: WriteRepo) -> None:
    root = write_repo(
        {
            "schemas/tools/broken.json": b'{"type": "object",\n  "properties": {}\n',
            "schemas/tools/list.json": b"[1, 2]",
            "schemas/tools/noid.json": tool_schema("noid", **{"$id": None}),
            "schemas/state/s.json": tool_schema("s", **{"x-version": "one"}),
        }
    )
    assert sorted(rule_ids(Repository.load(root))) == [
        ("SW001", "schemas/tools/broken.json", ""),
        ("SW002", "schemas/tools/list.json", ""),
        ("SW005", "schemas/tools/noid.json", ""),
        ("SW010", "schemas/state/s.json", "/x-version"),
    ]
    unreadable = next(f for f in Repository.load(root).findings if f.rule.id == "SW001")
    assert (unreadable.line, unreadable.column) == (3, 1)


def test_references_resolve_across_files_and_into_defs(write_repo: WriteRepo) -> None:
    money = {
        "$id": "https://example.com/schemas/common/money.json",
        "x-version": "1.0.0",
        "$defs": {"amount": {"type": "number", "exclusiveMinimum": 0}},
    }
    tool = tool_schema(
        "pay",
        properties={
            "relative": {"$ref": "../common/money.json#/$defs/amount"},
            "absolute": {"$ref": "https://example.com/schemas/common/money.json#/$defs/amount"},
            "local": {"$ref": "#/$defs/note"},
        },
        required=[],
        **{"$defs": {"note": {"type": "string"}}},
    )
    root = write_repo({"schemas/common/money.json": money, "schemas/tools/pay.json": tool})
    repository = Repository.load(root)
    assert repository.findings == ()
    pay = repository.find("pay")
    assert pay is not None
    compiled = repository.validator(pay)
    violations = compiled.violations({"relative": 0, "absolute": -1, "local": 5})
    assert [(v.pointer, v.keyword) for v in violations] == [
        ("/relative", "exclusiveMinimum"),
        ("/absolute", "exclusiveMinimum"),
        ("/local", "type"),
    ]


def test_unresolvable_references_name_file_and_pointer(write_repo: WriteRepo) -> None:
    tool = tool_schema(
        "t",
        properties={
            "a": {"$ref": "#/$defs/missing"},
            "b": {"$ref": "../common/absent.json"},
            "c": {"items": {"$ref": "https://schemas.example.org/money.json"}},
        },
    )
    repository = Repository.load(write_repo({"schemas/tools/t.json": tool}))
    assert rule_ids(repository) == [
        ("SW011", "schemas/tools/t.json", "/properties/a/$ref"),
        ("SW011", "schemas/tools/t.json", "/properties/b/$ref"),
        ("SW011", "schemas/tools/t.json", "/properties/c/items/$ref"),
    ]
    assert "never fetched" in repository.findings[2].message


def test_a_ref_inside_enum_or_default_is_data_not_a_reference(write_repo: WriteRepo) -> None:
    tool = tool_schema(
        "t",
        properties={
            "p": {
                "type": "object",
                "description": "d",
                "default": {"$ref": "#/nowhere"},
                "enum": [{"$ref": "https://nowhere.example/x.json"}],
            }
        },
    )
    assert Repository.load(write_repo({"schemas/tools/t.json": tool})).findings == ()


class _CountingHandler(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    _CountingHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CountingHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _CountingHandler.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_remote_reference_is_never_fetched(
    write_repo: WriteRepo, schema_server: tuple[str, list[str]]
) -> None:
    url, requests = schema_server
    tool = tool_schema("t", properties={"p": {"$ref": f"{url}/money.json", "description": "d"}})
    root = write_repo(
        {
            "schemas/tools/t.json": tool,
            "fixtures/tools/t/valid/a.json": {"p": "x"},
            "fixtures/tools/t/invalid/b.json": {"p": 1},
        }
    )
    repository = Repository.load(root)
    assert [f.rule.id for f in repository.findings] == ["SW011"]
    compiled = repository.validator(repository.files[0])
    assert not compiled.is_valid({"p": "anything"})  # fails closed: the reference stands for false
    assert requests == []


def test_a_null_schema_file_is_not_a_schema(write_repo: WriteRepo) -> None:
    root = write_repo({"schemas/tools/t.json": "null", "fixtures/tools/t/valid/a.json": {}})
    assert rule_ids(Repository.load(root)) == [("SW002", "schemas/tools/t.json", "")]


def test_references_and_ids_that_are_not_uris_are_findings(write_repo: WriteRepo) -> None:
    tool = tool_schema(
        "t",
        properties={
            "a": {"$ref": "http://[::1", "description": "x"},
            "b": {"$id": "http://[::1", "type": "string", "description": "x"},
        },
    )
    root = write_repo(
        {
            "schemas/tools/t.json": tool,
            "schemas/tools/u.json": tool_schema("u", **{"$id": "http://[::1"}),
        }
    )
    assert sorted(rule_ids(Repository.load(root))) == [
        ("SW006", "schemas/tools/u.json", "/$id"),
        ("SW011", "schemas/tools/t.json", "/properties/a/$ref"),
    ]


def test_draft_07_tuple_items_are_walked(write_repo: WriteRepo) -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    tool = tool_schema(
        "t",
        **{
            "$schema": draft7,
            "properties": {
                "pair": {
                    "type": "array",
                    "description": "x",
                    "items": [{"$ref": "#/definitions/s"}, {"$ref": "nowhere.json"}],
                }
            },
            "definitions": {"s": {"type": "string"}},
        },
    )
    repository = Repository.load(write_repo({"schemas/tools/t.json": tool}))
    assert rule_ids(repository) == [
        ("SW011", "schemas/tools/t.json", "/properties/pair/items/1/$ref")
    ]


def test_files_linked_from_outside_the_repository_are_not_read(
    write_repo: WriteRepo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.json"
    outside.write_text('{"password": "hunter2"}')
    root = write_repo({"schemas/tools/t.json": tool_schema("t")})
    (root / "schemas/tools/link.json").symlink_to(outside)
    findings = Repository.load(root).findings
    assert [(f.rule.id, f.file) for f in findings] == [("SW001", "schemas/tools/link.json")]
    assert "outside the repository" in findings[0].message


@pytest.mark.parametrize(
    ("settings", "pointer", "words"),
    [
        ('[repository]\ntools = "/etc"\n', "/repository/tools", "inside the repository"),
        ('[repository]\ntools = "../../elsewhere"\n', "/repository/tools", "inside the repository"),
        ("[repository]\ntools = 1979-05-27\n", "/repository/tools", "string, number"),
        ('[lint]\nignore = ["SW999"]\n', "/lint/ignore", 'unknown rule "SW999"'),
        ('[lint]\nignore = ["sw101"]\n', "/lint/ignore", 'did you mean "SW101"?'),
        ("[repository]\ntools = 5\n", "/repository/tools", "must be of type string"),
    ],
)
def test_unusable_settings_name_the_setting(
    write_repo: WriteRepo, settings: str, pointer: str, words: str
) -> None:
    root = write_repo({"schemawire.toml": settings})
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    assert caught.value.pointer == pointer
    assert words in caught.value.message
    assert 'did you mean "tools"' not in caught.value.message


def test_settings_that_are_not_utf8_are_an_error(write_repo: WriteRepo) -> None:
    root = write_repo({"schemawire.toml": b"[lint]\nignore = ['\xff']\n"})
    with pytest.raises(ConfigError):
        load_config(root)


def test_a_pyproject_whose_tool_is_not_a_table_has_no_settings(write_repo: WriteRepo) -> None:
    root = write_repo({"pyproject.toml": 'tool = "x"\n'})
    assert load_config(root).source is None
