"""config.py: the root found upward (as git and pytest do) and [tool.skillmake] / skillmake.toml, validated."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from skillmake.spec.config import ConfigErrors, find_root, load_config
from tests.conftest import write

REPO = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((REPO / "schemas" / "config.schema.json").read_text())
EXAMPLES = REPO / "tests" / "data" / "schemas" / "config"


@pytest.fixture(autouse=True)
def _no_root_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILLMAKE_ROOT", raising=False)
    monkeypatch.delenv("SKILLMAKE_STORE", raising=False)


# --- find_root ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("rel", "text"), [
    ("skillmake.toml", "specs = ['evals']\n"),
    ("pyproject.toml", "[project]\nname = 'x'\n\n[tool.skillmake]\n"),
    ("pyproject.toml", "[tool.skillmake.judge]\nprovider = 'openai'\n"),
    ("dodo.py", "from skillmake.dodo import *  # noqa\n"),
    ("dodo.py", "import os\nimport skillmake.dodo\n"),
])
def test_a_project_file_above_makes_the_root(tmp_path: Path, rel: str, text: str) -> None:
    write(tmp_path / "proj" / rel, text)
    deep = tmp_path / "proj" / "evals" / "deep"
    deep.mkdir(parents=True)
    assert find_root(str(deep)) == str(tmp_path / "proj")
    assert not (deep / ".skillmake").exists() and not (tmp_path / "proj" / ".skillmake").exists()  # creates nothing


@pytest.mark.parametrize(("rel", "text"), [
    ("pyproject.toml", "[project]\nname = 'skillmake-user'\ndependencies = ['skillmake']\n"),  # no table of ours
    ("dodo.py", "def task_hello():\n    return {'actions': ['echo skillmake']}\n"),  # a dodo.py of another tool
])
def test_files_that_are_not_ours_do_not_make_a_root(tmp_path: Path, rel: str, text: str) -> None:
    write(tmp_path / "proj" / rel, text)
    sub = tmp_path / "proj" / "sub"
    sub.mkdir()
    assert find_root(str(sub)) == str(sub)


def test_the_nearest_project_file_wins_and_beats_a_nearer_store(tmp_path: Path) -> None:
    write(tmp_path / "outer" / "skillmake.toml", "")
    write(tmp_path / "outer" / "inner" / "pyproject.toml", "[tool.skillmake]\n")
    (tmp_path / "outer" / "inner" / "a" / ".skillmake" / "objects").mkdir(parents=True)
    assert find_root(str(tmp_path / "outer" / "inner" / "a")) == str(tmp_path / "outer" / "inner")
    assert find_root(str(tmp_path / "outer")) == str(tmp_path / "outer")


def test_a_store_with_results_makes_the_root_a_stray_one_does_not(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".skillmake" / "reports").mkdir(parents=True)
    (proj / "sub" / ".skillmake").mkdir(parents=True)  # what an older skillmake left behind: nothing ran
    write(proj / "sub" / ".skillmake" / ".gitignore", "*\n")
    assert find_root(str(proj / "sub")) == str(proj)


def test_a_store_in_the_home_folder_does_not_swallow_projects_under_it(tmp_path: Path) -> None:
    home = tmp_path / "home"  # conftest points HOME here
    (home / ".skillmake" / "objects").mkdir(parents=True)
    (home / "work" / "proj").mkdir(parents=True)
    assert find_root(str(home / "work" / "proj")) == str(home / "work" / "proj")


def test_without_any_marker_the_start_folder_is_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    assert find_root() == str(tmp_path / "a" / "b")


def test_skillmake_root_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "proj" / "skillmake.toml", "")
    (tmp_path / "other").mkdir()
    monkeypatch.setenv("SKILLMAKE_ROOT", str(tmp_path / "other"))
    assert find_root(str(tmp_path / "proj")) == str(tmp_path / "other")


# --- load_config ----------------------------------------------------------------------------------------------

def test_no_configuration_is_all_defaults(tmp_path: Path) -> None:
    config = load_config(str(tmp_path))
    assert config.file is None and config.specs == () and config.jobs is None
    assert config.state_dir == str(tmp_path / ".skillmake") == config.content_store


def test_pyproject_table_is_read(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", """\
[project]
name = "demo"

[tool.skillmake]
specs = ["evals", "more/*"]
exclude = ["drafts"]
store = "build/skillmake"
jobs = 4
trials = 3
timeout = 60
agent = {model = "claude-haiku-4-5", max_turns = 8}

[tool.skillmake.judge]
provider = "openai"
""")
    config = load_config(str(tmp_path))
    assert config.file == str(tmp_path / "pyproject.toml")
    assert (config.specs, config.exclude, config.jobs, config.trials, config.timeout) == (
        ("evals", "more/*"), ("drafts",), 4, 3, 60.0)
    assert config.state_dir == str(tmp_path / "build" / "skillmake")
    assert config.agent == {"model": "claude-haiku-4-5", "max_turns": 8} and config.judge == {"provider": "openai"}


def test_skillmake_toml_is_read_at_its_top_level_and_beats_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.skillmake]\ntrials = 9\n")
    write(tmp_path / "skillmake.toml", "trials = 2\n")
    assert load_config(str(tmp_path)).trials == 2


def test_shared_store_variable_moves_only_the_content_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLMAKE_STORE", str(tmp_path / "shared"))
    config = load_config(str(tmp_path))
    assert config.content_store == str(tmp_path / "shared") and config.state_dir == str(tmp_path / ".skillmake")


def test_errors_are_located_in_pyproject_with_the_table_pointer_and_a_hint(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", """\
[project]
name = "demo"

[tool.skillmake]
specs = ["evals"]
jobs = 0
agent = {model = "m", max_turn = 3}
storre = "x"

[tool.skillmake.judge]
provider = "bogus"
""")
    with pytest.raises(ConfigErrors) as caught:
        load_config(str(tmp_path))
    assert caught.value.exit_code == 2
    rendered = caught.value.render().splitlines()
    assert rendered == [
        "pyproject.toml:6:8 /tool/skillmake/jobs: 0 is out of range: must be >= 1",
        "  hint: use a value >= 1",
        "pyproject.toml:7:23 /tool/skillmake/agent/max_turn: unknown key 'max_turn'",
        "  hint: did you mean 'max_turns'?",
        "pyproject.toml:8:1 /tool/skillmake/storre: unknown key 'storre'",
        "  hint: did you mean 'store'?",
        "pyproject.toml:11:12 /tool/skillmake/judge/provider: 'bogus' is not a judge provider",
        "  hint: choose one of: anthropic, openai, claude-code, codex",
    ]


def test_errors_in_skillmake_toml_have_top_level_pointers(tmp_path: Path) -> None:
    write(tmp_path / "skillmake.toml", "# settings\n\ntrials = \"three\"\n")
    with pytest.raises(ConfigErrors, match=r"skillmake.toml:3:10 /trials: .*integer"):
        load_config(str(tmp_path))


def test_a_tool_table_in_skillmake_toml_is_explained(tmp_path: Path) -> None:
    write(tmp_path / "skillmake.toml", "[tool.skillmake]\nspecs = ['evals']\n")
    with pytest.raises(ConfigErrors, match=r"(?s)skillmake.toml:1:1 /tool: .*top level.*drop the \[tool.skillmake\]"):
        load_config(str(tmp_path))


def test_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "skillmake.toml", "specs = ['evals', '../elsewhere']\n")
    with pytest.raises(ConfigErrors, match=r"skillmake.toml:1:9 /specs/1: '../elsewhere' points outside"):
        load_config(str(tmp_path))


def test_toml_syntax_errors_are_located(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.skillmake]\nspecs = [\"evals\"\njobs = 2\n")
    with pytest.raises(ConfigErrors, match=r"pyproject.toml:3:\d+ /: not valid TOML"):
        load_config(str(tmp_path))


def test_someone_elses_broken_pyproject_is_not_our_error(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'skillmake-plugin\n")
    assert load_config(str(tmp_path)).file is None


# --- the schema and its examples ---------------------------------------------------------------------------------

def test_the_schema_is_valid_draft_07_and_closed() -> None:
    Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize("path", sorted((EXAMPLES / "good").iterdir()), ids=lambda p: p.name)
def test_good_examples_validate(path: Path) -> None:
    assert list(Draft7Validator(SCHEMA).iter_errors(tomllib.loads(path.read_text()))) == []


@pytest.mark.parametrize("path", sorted((EXAMPLES / "bad").iterdir()), ids=lambda p: p.name)
def test_bad_examples_fail(path: Path) -> None:
    assert list(Draft7Validator(SCHEMA).iter_errors(tomllib.loads(path.read_text())))
