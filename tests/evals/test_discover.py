"""Where cases live: ``evals/*.json`` at the root of a repository, whichever file holds its
settings; the pytest plugin (`is_case_file`) and ``schemawire eval`` (`find_cases`) agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemawire.evals import find_cases, is_case_file

LAYOUTS = {
    "schemawire.toml": ("schemawire.toml", "[repository]\n"),
    "pyproject.toml": ("pyproject.toml", "[project]\nname = 'x'\n\n[tool.schemawire]\n"),
}


def repository(folder: Path, layout: str) -> Path:
    name, text = LAYOUTS[layout]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    (folder / "evals").mkdir()
    (folder / "evals" / "case.json").write_text("{}", encoding="utf-8")
    return folder


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_cases_of_a_repository_are_case_files_in_either_layout(
    tmp_path: Path, layout: str
) -> None:
    root = repository(tmp_path / "repo", layout)
    for start in (root, root / "evals"):
        cases = find_cases(start=start)
        assert cases == [root / "evals" / "case.json"]
        assert all(is_case_file(case) for case in cases)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_json_elsewhere_in_a_repository_is_no_case(tmp_path: Path, layout: str) -> None:
    root = repository(tmp_path / "repo", layout)
    nested = root / "sub" / "evals" / "x.json"  # evals/, but not at the root
    nested.parent.mkdir(parents=True)
    nested.write_text("{}")
    assert not is_case_file(nested)
    assert find_cases(start=nested.parent) == [root / "evals" / "case.json"]
    assert not is_case_file(root / "fixtures" / "x.json")
    assert not is_case_file(root / "evals" / "notes.txt")


def test_without_settings_evals_json_is_no_case(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no [tool.schemawire]
    assert not is_case_file(tmp_path / "evals" / "x.json")
    assert not is_case_file(tmp_path / "elsewhere" / "evals" / "x.json")


def test_an_evals_folder_with_its_own_settings_is_a_root_not_its_cases(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", "schemawire.toml")
    (root / "evals" / "schemawire.toml").write_text("")
    assert not is_case_file(root / "evals" / "case.json")
