"""The docs site builds with warnings as errors (as `make docs` builds it), holds the pages of
docs/, and its API reference is generated from the docstrings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[1]
MKDOCS = Path(sys.executable).with_name("mkdocs")


def nav_pages(entries: list[object]) -> list[str]:
    """Every page the nav of mkdocs.yml names, in order."""
    pages: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def test_every_page_of_docs_is_in_the_nav() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    in_nav = set(nav_pages(config["nav"]))
    on_disk = {str(page.relative_to(ROOT / "docs")) for page in (ROOT / "docs").rglob("*.md")}
    assert on_disk - in_nav == set()
    assert in_nav - on_disk == set()


@pytest.mark.slow  # runs mkdocs over every page and the whole package's docstrings
def test_the_site_builds_strictly_with_the_api_reference(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        check=False,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    for page in (
        "index.html",
        "gates/index.html",
        "mcp/index.html",
        "reference/schemas/index.html",
    ):
        assert (site / page).is_file(), page
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    # Each class's heading and a sentence of its own docstring: generated, not a stub.
    for name in ("Host", "ArgumentGate", "ResultGate", "Repository"):
        assert f'id="schemawire.{name}"' in api, name
    assert "every hop gated and traced" in api  # Host's docstring
    assert "Checks the arguments of calls to one tool" in api  # ArgumentGate's
    schemas = (site / "reference" / "schemas" / "index.html").read_text(encoding="utf-8")
    assert "violations_omitted" in schemas  # the rejection schema included whole
