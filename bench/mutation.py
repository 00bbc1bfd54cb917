"""Mutation measurement: how many plausible one-line bugs in the core modules do the fast tests catch?

Not part of CI (slow). Copies skillmake/, tests/, schemas/, examples/, docs/ and pyproject.toml into a
temporary folder (one copy per job; the working tree is never touched, so others may keep editing it), then for
each core module makes one mutation at a time in the copy and runs the few test files that cover that module:

    pytest -x -q -p no:cacheprovider -n 0 <tests>      (cwd and PYTHONPATH = the copy)

run by a fork server per job: a process that has imported pytest and the SDKs once and forks a child per
mutant, which imports skillmake afresh from the copy (no bytecode is written, so no stale .pyc).

A mutant is killed when the tests fail (or the module no longer imports), timed out when they run past
3 x the module's baseline + 10 s, survived when they pass. Mutations, made in the source text at the node's
position so the rest of the file keeps its formatting:
  - comparisons at the boundary or negated: < <=, > >=, == !=, in / not in, is / is not
  - and <-> or;  `not` dropped;  True <-> False;  integer and float constants + 1
  - one member dropped from a literal tuple / list / set / frozenset of constants
  - `return x` -> `return None`
  - a statement deleted (replaced by `pass`): calls, raise, augmented assignments, break/continue, stores
    into attributes or items, and re-assignments of a name already bound in the function
A line ending in `# pragma: no mutate` is left alone. The same change on two identical lines of a file is told
apart by its order: the second shows as `… → mutated ⟨2⟩`.

Before the mutants, each module gets a baseline run in a fresh interpreter (tests failing on the unmutated copy,
e.g. because the working tree is mid-edit, are deselected and named), the same tests through the fork server
(they must pass there too), and a canary per file (made to raise on import: the tests must fail, which proves
the copy, not the editable install of the working tree, is what gets imported).

A full run is slow (1,300 mutants; an hour or more on the shared 2-core machine): use --module while working.

Survivors judged equivalent (no test could tell them apart) or not worth a test are listed in
bench/mutation_equivalent.txt, one per line, keyed by file and source text, not by line number:

    skillmake/core/stats.py:12: if n <= 0: → if n < 0:  # n is a count; n < 0 never happens

The table counts them as `explained`; score = (killed + timeout + explained) / mutants. Every other survivor is
printed as `file:line: original → mutated`. Survivors are also written to bench/results/mutation.json (git-
ignored) and compared with the previous run's file there, so a change shows as new or gone survivors.

    python bench/mutation.py [--module NAME ...] [--jobs 2] [--list] [--keep]
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import io
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

REPO = Path(__file__).resolve().parent.parent
EQUIVALENT = REPO / "bench" / "mutation_equivalent.txt"
RESULTS = REPO / "bench" / "results" / "mutation.json"
COPIED = ("skillmake", "tests", "schemas", "examples", "docs", "pyproject.toml", "README.md")
PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-n", "0")

# The judges' verdict parsing: the whole verdict reader, and the per-judge functions that turn a reply into entries.
_JUDGE_PARSING = ("verdicts", "from_text", "_field_checks", "_value", "_entry", "threshold")


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A module under mutation: its files (optionally only some top-level functions) and the tests that cover it."""

    files: tuple[str, ...]
    tests: tuple[str, ...]
    functions: dict[str, tuple[str, ...]] = field(default_factory=dict)  # file -> only these top-level defs


TARGETS: dict[str, Target] = {
    "keys": Target(files=("skillmake/run/keys.py",),
                   tests=("tests/unit/run/test_keys.py", "tests/unit/engine/test_plan.py",
                          "tests/functional/test_incremental.py")),
    "store": Target(files=("skillmake/store/objects.py",),
                    tests=("tests/unit/store/test_objects.py", "tests/unit/engine/test_plan.py",
                           "tests/unit/store/test_objects_attempts.py", "tests/unit/store/test_objects_signatures.py")),
    "locks": Target(files=("skillmake/store/locks.py",),
                    tests=("tests/unit/store/test_locks.py", "tests/unit/store/test_objects_attempts.py")),
    "syncer": Target(files=("skillmake/store/syncer.py",),
                     tests=("tests/unit/store/test_syncer.py", "tests/unit/store/test_objects.py")),
    "cellview": Target(files=("skillmake/results/cellview.py",),
                       tests=("tests/unit/results/test_cellview.py", "tests/unit/results/test_checkout.py")),
    "checkout": Target(files=("skillmake/results/checkout.py",),
                       tests=("tests/unit/results/test_checkout.py", "tests/unit/results/test_cellview.py",
                              "tests/unit/results/test_records_of.py")),
    "trial": Target(files=("skillmake/run/trial.py",),
                    tests=("tests/unit/run/test_trial.py", "tests/unit/run/test_trial_run.py",
                           "tests/unit/run/test_command_words.py", "tests/unit/engine/test_plan.py",
                           "tests/unit/run/test_agents_cli.py",
                           "tests/functional/test_isolation.py", "tests/functional/test_trust.py",
                           "tests/functional/test_incremental.py")),
    "plan": Target(files=("skillmake/engine/plan.py",),
                   tests=("tests/unit/engine/test_plan.py", "tests/unit/engine/test_index.py",
                          "tests/unit/engine/test_scope.py", "tests/functional/test_incremental.py")),
    "workspace": Target(files=("skillmake/run/workspace.py",),
                        tests=("tests/unit/run/test_workspace.py", "tests/unit/core/test_fstree.py",
                               "tests/unit/run/test_workspace_pins.py",
                               "tests/unit/run/test_trial.py",
                               "tests/functional/test_isolation.py")),
    "checks": Target(files=("skillmake/run/checks",),
                     tests=("tests/unit/run/test_checks.py",)),
    "stats": Target(files=("skillmake/core/stats.py",),
                    tests=("tests/unit/core/test_stats.py", "tests/unit/results/test_thresholds_intervals.py",
                           "tests/unit/core/test_stats_adaptive.py")),
    "thresholds": Target(files=("skillmake/results/thresholds.py",),
                         tests=("tests/unit/results/test_records.py", "tests/unit/results/test_thresholds.py")),
    "judges": Target(files=("skillmake/run/judges/verdict.py", "skillmake/run/judges/rubric.py",
                            "skillmake/run/judges/criteria.py", "skillmake/run/judges/expectations.py",
                            "skillmake/run/judges/sections.py"),
                     functions={"skillmake/run/judges/rubric.py": _JUDGE_PARSING,
                                "skillmake/run/judges/criteria.py": _JUDGE_PARSING,
                                "skillmake/run/judges/expectations.py": _JUDGE_PARSING,
                                "skillmake/run/judges/sections.py": _JUDGE_PARSING},
                     tests=("tests/unit/run/test_judges_replies.py", "tests/unit/run/test_judges.py")),
    "judge_providers": Target(files=("skillmake/run/judges/anthropic_provider.py",
                                     "skillmake/run/judges/openai_provider.py",
                                     "skillmake/run/judges/claude_code_provider.py", "skillmake/run/judges/base.py"),
                              tests=("tests/unit/run/test_judges_key.py", "tests/unit/run/test_judges_preflight.py",
                                     "tests/unit/run/test_judges_redaction.py",
                                     "tests/unit/run/test_judges_replies.py",
                                     "tests/unit/run/test_judges_anthropic_provider.py")),
    "anthropic_judge": Target(files=("skillmake/run/judges/anthropic_provider.py",),
                              tests=("tests/unit/run/test_judges_redaction.py", "tests/unit/run/test_judges_key.py",
                                     "tests/unit/run/test_judges_replies.py",
                                     "tests/unit/run/test_judges_anthropic_provider.py")),
    "agreement": Target(files=("skillmake/run/judges/agreement.py",),
                        tests=("tests/unit/run/test_judges_agreement.py",)),
    "trigger_section": Target(files=("skillmake/results/triggers.py",),
                              tests=("tests/unit/triggers/test_keys.py",)),
    "redact": Target(files=("skillmake/core/redact.py",),
                     tests=("tests/unit/core/test_redact.py", "tests/unit/run/test_judges_redaction.py",
                            "tests/unit/run/test_agents_cli.py")),
    "source": Target(files=("skillmake/spec/source.py",),
                     tests=("tests/unit/spec/test_source.py", "tests/unit/spec/test_schema_examples.py")),
}


@dataclass(frozen=True, slots=True)
class Mutant:
    file: str  # relative to the repository
    line: int
    start: tuple[int, int]  # (line, char column) of the replaced span
    end: tuple[int, int]
    replacement: str
    original: str  # the line as shown, comment stripped
    mutated: str

    @property
    def key(self) -> str:
        return f"{self.file}: {self.original} → {self.mutated}"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.original} → {self.mutated}"


# --- finding mutation points ----------------------------------------------------------------------------------

_BOUNDARY = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "==",
             ast.In: "not in", ast.NotIn: "in", ast.Is: "is not", ast.IsNot: "is"}
_NEGATED = {ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<"}


class _Finder(ast.NodeVisitor):
    """Collects (start, end, replacement) spans in character columns; `only` limits to some top-level defs."""

    def __init__(self, text: str, only: tuple[str, ...] | None) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                       if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)]
        self.only = only
        self.spans: list[tuple[tuple[int, int], tuple[int, int], str]] = []
        self._top: str | None = None
        self._bound: list[dict[str, int]] = []  # per enclosing function: name -> first line it is bound

    # positions: ast gives UTF-8 byte columns, tokenize gives characters
    def _char(self, line: int, byte_col: int) -> int:
        return len(self.lines[line - 1].encode()[:byte_col].decode(errors="replace"))

    def _start(self, node: ast.AST) -> tuple[int, int]:
        return node.lineno, self._char(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def _end(self, node: ast.AST) -> tuple[int, int]:
        return node.end_lineno, self._char(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def _tokens_between(self, a: tuple[int, int], b: tuple[int, int]) -> list[tokenize.TokenInfo]:
        return [t for t in self.tokens if a <= t.start and t.end <= b and t.string not in "()"]

    def _add(self, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        if self.only is None or self._top in self.only:
            self.spans.append((start, end, text))

    # scopes and what is not mutated
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self._top
        if self._top is None:
            self._top = node.name
        for d in node.decorator_list:
            self.visit(d)
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(default)
        args = node.args
        bound = {a.arg: node.lineno for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                              *(x for x in (args.vararg, args.kwarg) if x)]}
        self._bound.append(bound)
        self._body(node.body)
        self._bound.pop()
        self._top = outer

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer = self._top
        if self._top is None:
            self._top = node.name
        self._body(node.body)
        self._top = outer

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def _body(self, body: list[ast.stmt], *, docstring: bool = True) -> None:
        if docstring and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        for stmt in body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                continue
            if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
                continue
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in stmt.targets):
                continue
            self._maybe_delete(stmt)
            if hasattr(self, f"visit_{type(stmt).__name__}"):
                self.visit(stmt)
            else:
                self._walk(stmt)

    def _walk(self, node: ast.AST) -> None:
        """Like generic_visit, but nested statement lists go through _body (deletions, skips)."""
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self._body(value, docstring=False)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    visit_ExceptHandler = visit_match_case = _walk  # type: ignore[assignment]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_arg(self, node: ast.arg) -> None:
        pass  # annotations

    def visit_Name(self, node: ast.Name) -> None:
        if self._bound and isinstance(node.ctx, ast.Store):
            self._bound[-1].setdefault(node.id, node.lineno)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        pass  # f-string internals: positions are unreliable before 3.12

    # the mutations
    def visit_Compare(self, node: ast.Compare) -> None:
        left: ast.expr = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            toks = self._tokens_between(self._end(left), self._start(right))
            if toks:
                start, end = toks[0].start, toks[-1].end
                self._add(start, end, _BOUNDARY[type(op)])
                if type(op) in _NEGATED:
                    self._add(start, end, _NEGATED[type(op)])
            left = right
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = "or" if isinstance(node.op, ast.And) else "and"
        for a, b in zip(node.values, node.values[1:], strict=False):
            for tok in self._tokens_between(self._end(a), self._start(b)):
                if tok.string in ("and", "or"):
                    self._add(tok.start, tok.end, other)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            toks = [t for t in self.tokens if t.start >= self._start(node)]
            if len(toks) > 1 and toks[0].string == "not":
                self._add(toks[0].start, toks[1].start, "")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add(self._start(node), self._end(node), str(not value))
        elif isinstance(value, int | float) and not isinstance(value, complex):
            literal = ast.get_source_segment(self.text, node) or ""
            base = {"0o": "o", "0x": "x", "0b": "b"}.get(literal[:2].lower())
            self._add(self._start(node), self._end(node),
                      f"0{base}{value + 1:{base}}" if base and isinstance(value, int) else repr(value + 1))

    def _collection(self, node: ast.Tuple | ast.List | ast.Set) -> None:
        elts = node.elts
        if len(elts) >= 2 and all(isinstance(e, ast.Constant) for e in elts) and \
                isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            for i, e in enumerate(elts):
                s, t = self._start(e), self._end(e)
                if isinstance(node, ast.Tuple) and len(elts) == 2:  # keep it a tuple: (a, b) -> (b,)
                    kept = ast.get_source_segment(self.text, elts[1 - i])
                    self._add(self._start(node), self._end(node), f"({kept},)")
                elif i + 1 < len(elts) and self._start(elts[i + 1])[0] == s[0]:
                    self._add(s, self._start(elts[i + 1]), "")
                elif i > 0 and self._end(elts[i - 1])[0] == s[0]:
                    self._add(self._end(elts[i - 1]), t, "")
                else:  # alone on its line: drop it and its comma
                    after = [k for k in self.tokens if k.start >= t and k.start[0] == t[0]]
                    self._add(s, after[0].end if after and after[0].string == "," else t, "")
        self.generic_visit(node)

    visit_Tuple = visit_List = visit_Set = _collection  # type: ignore[assignment]

    def visit_Return(self, node: ast.Return) -> None:
        v = node.value
        if v is not None and not (isinstance(v, ast.Constant) and v.value is None):
            self._add(self._start(v), self._end(v), "None")
        self.generic_visit(node)

    def _maybe_delete(self, stmt: ast.stmt) -> None:
        if not self._bound or any(t.string == ";" for t in self.tokens if t.start[0] == stmt.lineno):
            return  # only inside functions; never one of several statements on a line
        deletable = isinstance(stmt, ast.Expr | ast.AugAssign | ast.Raise | ast.Break | ast.Continue | ast.Delete)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            deletable = False  # `...`
        if isinstance(stmt, ast.Assign):
            names = [t for t in stmt.targets if isinstance(t, ast.Name)]
            deletable = not names or all(self._bound[-1].get(n.id, stmt.lineno) < stmt.lineno for n in names)
        if deletable:
            self._add(self._start(stmt), self._end(stmt), "pass")


def _display(line: str) -> str:
    """A line as shown: without its comment and surrounding space (best effort on a fragment)."""
    text = line.strip()
    try:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            if t.type == tokenize.COMMENT:
                return text[:t.start[1]].strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return text


def apply(text: str, start: tuple[int, int], end: tuple[int, int], replacement: str) -> str:
    lines = text.splitlines(keepends=True)
    head = "".join(lines[:start[0] - 1]) + lines[start[0] - 1][:start[1]]
    tail = lines[end[0] - 1][end[1]:] + "".join(lines[end[0]:])
    return head + replacement + tail


def mutants_of(rel: str, text: str, only: tuple[str, ...] | None = None) -> list[Mutant]:
    finder = _Finder(text, only)
    finder.visit(ast.parse(text))
    old = text.splitlines()
    found: list[Mutant] = []
    seen: dict[tuple[str, str], int] = {}
    for start, end, replacement in sorted(set(finder.spans)):
        if "pragma: no mutate" in old[start[0] - 1]:
            continue
        new_text = apply(text, start, end, replacement)
        try:
            ast.parse(new_text)
        except SyntaxError:
            continue
        original = _display(old[start[0] - 1]) + (" …" if end[0] > start[0] else "")
        mutated = _display(new_text.splitlines()[start[0] - 1]) or "(nothing)"
        seen[original, mutated] = seen.get((original, mutated), 0) + 1
        if seen[original, mutated] > 1:  # the same change on an identical line: told apart by its order
            mutated += f" ⟨{seen[original, mutated]}⟩"
        found.append(Mutant(rel, start[0], start, end, replacement, original, mutated))
    return found


def collect(snapshot: Path, name: str) -> list[Mutant]:
    target = TARGETS[name]
    found: list[Mutant] = []
    for entry in target.files:
        path = snapshot / entry
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.is_file() else []
        for f in files:
            rel = f.relative_to(snapshot).as_posix()
            found += mutants_of(rel, f.read_text(), target.functions.get(rel))
    return found


# --- running ---------------------------------------------------------------------------------------------------

def _env(copy: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
    return env | {"PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}


def run_tests(copy: Path, tests: list[str], *, timeout: float, first_failure: bool = True
              ) -> tuple[str, float, str]:
    """('passed' | 'failed' | 'timeout', seconds, output) of the tests in `copy`."""
    argv = [sys.executable, *PYTEST, *tests]
    if not first_failure:
        argv.remove("-x")
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=copy, env=_env(copy), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", time.perf_counter() - t0, ""
    if proc.returncode in (3, 4):  # internal or usage error: a broken tool, not a killed mutant
        raise SystemExit(f"pytest exited {proc.returncode} in {copy}:\n{out[-3000:]}")
    return ("passed" if proc.returncode == 0 else "failed"), time.perf_counter() - t0, out


# Third-party modules the tests import, loaded once per job by the fork server (never skillmake). Some are, or
# import, pytest plugins (hypothesis, anyio), whose asserts pytest then cannot rewrite: the child says so is fine.
_PRELOAD = ("pytest", "hypothesis", "anthropic", "openai", "jsonschema", "yaml", "doit", "orjson")
_CHILD_ARGS = ("-W", "ignore::pytest.PytestAssertRewriteWarning")


def serve() -> None:
    """The fork server, one per job (cwd and PYTHONPATH = its copy): for each request line `[args, timeout]`,
    fork, run pytest in the child (which imports skillmake afresh from the copy, mutant included) and answer
    `[state, seconds]`. Saves the interpreter start and the SDK imports on every mutant."""
    import importlib

    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    for line in sys.stdin:
        args, timeout = json.loads(line)
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.setsid()
            out = os.open(".mutation-out.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, 1)
            os.dup2(out, 2)
            code = 1
            try:
                import pytest

                code = int(pytest.main([*_CHILD_ARGS, *args]))
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        state = "timeout"
        parent = os.getppid()
        while time.perf_counter() - t0 < timeout and os.getppid() == parent:  # the bench gone: stop too
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                state = "passed" if code == 0 else "error" if code in (3, 4) else "failed"
                break
            time.sleep(0.02)
        else:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        print(json.dumps([state, time.perf_counter() - t0]), flush=True)


class Job:
    """One copy of the project and its fork server."""

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve"], cwd=copy,
                                     env=_env(copy), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, args: list[str], timeout: float) -> str:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps([[*PYTEST[2:], *args], timeout]) + "\n")
        self.proc.stdin.flush()
        state, _ = json.loads(self.proc.stdout.readline())
        if state == "error":  # internal or usage error: a broken tool, not a killed mutant
            raise SystemExit(f"pytest failed to run in {self.copy}:\n{(self.copy / '.mutation-out.txt').read_text()}")
        return str(state)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


def _mutated(copy: Path, mutant: Mutant, snapshot: Path) -> None:
    text = (snapshot / mutant.file).read_text()
    (copy / mutant.file).write_text(apply(text, mutant.start, mutant.end, mutant.replacement))


def _restore(copy: Path, rel: str, snapshot: Path) -> None:
    shutil.copyfile(snapshot / rel, copy / rel)


def prepare(snapshot: Path, name: str, job: Job, mutants: list[Mutant]) -> tuple[list[str], float]:
    """The module's test arguments (failing baseline tests deselected) and the per-mutant timeout."""
    copy = job.copy
    tests = [t for t in TARGETS[name].tests if (snapshot / t).is_file()]
    state, seconds, out = run_tests(copy, tests, timeout=900, first_failure=False)
    args = list(tests)
    if state != "passed":
        failing = sorted({line.split()[1] for line in out.splitlines() if line.startswith(("FAILED ", "ERROR "))})
        if not failing:
            raise SystemExit(f"{name}: baseline tests {state} and no failing test could be named:\n{out[-3000:]}")
        print(f"  {name}: deselected {len(failing)} test(s) failing on the unmutated copy: {', '.join(failing)}",
              flush=True)
        args += [f"--deselect={f}" for f in failing]
        state, seconds, out = run_tests(copy, args, timeout=900)
        if state != "passed":
            raise SystemExit(f"{name}: baseline still fails after deselecting:\n{out[-3000:]}")
    state = job.run(args, timeout=900)
    if state != "passed":  # the fork server must pass what a fresh interpreter passes
        raise SystemExit(f"{name}: the tests pass in a fresh interpreter but not in the fork server ({state}):\n"
                         + (copy / ".mutation-out.txt").read_text()[-4000:])
    for rel in sorted({m.file for m in mutants}):  # the canary: this must be the module the tests import
        (copy / rel).write_text("raise RuntimeError('mutation canary')\n" + (snapshot / rel).read_text())
        state = job.run(args, timeout=900)
        _restore(copy, rel, snapshot)
        if state != "failed":
            raise SystemExit(f"{name}: the tests pass with {rel} made to raise on import: the copy in {copy} "
                             "is not what they import (check PYTHONPATH / the editable install)")
    return args, 3 * seconds + 10


def load_equivalent() -> dict[str, str]:
    """key -> reason, from bench/mutation_equivalent.txt (`file:line: original → mutated  # why`)."""
    known: dict[str, str] = {}
    if not EQUIVALENT.is_file():
        return known
    for raw in EQUIVALENT.read_text().splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        body, _, why = raw.rpartition("  # ")
        file, _, rest = body.partition(":")
        _, _, change = rest.partition(": ")
        known[f"{file}: {change.strip()}"] = why.strip() if body else ""
    return known


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", action="append", choices=sorted(TARGETS), help="repeatable; default: all")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="only list the mutants")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies")
    parser.add_argument("--json", default=str(RESULTS), help="where to write the survivors (default %(default)s)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.serve:
        serve()
        return 0
    names = opts.module or list(TARGETS)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `kill` still removes the temporary copies

    work = Path(tempfile.mkdtemp(prefix="skillmake-mutation-"))
    snapshot = work / "snapshot"
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis", "*.pyc")
    try:
        for item in COPIED:
            src = REPO / item
            if src.is_dir():
                shutil.copytree(src, snapshot / item, ignore=ignore, symlinks=True)
            elif src.is_file():
                snapshot.mkdir(exist_ok=True)
                shutil.copyfile(src, snapshot / item)
        found = {name: collect(snapshot, name) for name in names}
        if opts.list:
            for name in names:
                print(f"{name}: {len(found[name])} mutants")
                for m in found[name]:
                    print(f"  {m}")
            return 0
        jobs: queue.Queue[Job] = queue.Queue()
        for i in range(max(1, opts.jobs)):
            shutil.copytree(snapshot, work / f"job{i}", symlinks=True)
            jobs.put(Job(work / f"job{i}"))
        known = load_equivalent()
        used: set[str] = set()
        rows, survivors, report = [], [], {}
        t_start = time.perf_counter()
        for name in names:
            mutants = found[name]
            t0 = time.perf_counter()
            first = jobs.get()
            try:
                args, timeout = prepare(snapshot, name, first, mutants)
            finally:
                jobs.put(first)
            print(f"  {name}: {len(mutants)} mutants, per-mutant timeout {timeout:.0f} s", flush=True)

            def one(m: Mutant, args: list[str] = args, timeout: float = timeout) -> tuple[Mutant, str]:
                job = jobs.get()
                try:
                    _mutated(job.copy, m, snapshot)
                    state = job.run(args, timeout)
                finally:
                    _restore(job.copy, m.file, snapshot)
                    jobs.put(job)
                return m, state

            counts = {"killed": 0, "timeout": 0, "explained": 0, "survived": 0}
            mine: list[Mutant] = []
            with concurrent.futures.ThreadPoolExecutor(max(1, opts.jobs)) as pool:
                for i, (m, state) in enumerate(pool.map(one, mutants), 1):
                    if i % 25 == 0:
                        print(f"  {name}: {i}/{len(mutants)}", flush=True)
                    if state == "failed":
                        counts["killed"] += 1
                    elif state == "timeout":
                        counts["timeout"] += 1
                    elif m.key in known:
                        counts["explained"] += 1
                        used.add(m.key)
                    else:
                        counts["survived"] += 1
                        mine.append(m)
            n = len(mutants)
            score = (n - counts["survived"]) / n * 100 if n else 100.0
            rows.append((name, n, counts["killed"], counts["timeout"], counts["explained"], counts["survived"],
                         f"{score:.1f}", f"{time.perf_counter() - t0:.0f} s"))
            survivors += mine
            report[name] = counts | {"mutants": n, "score": round(score, 1)}
            print(f"  {name}: done, {counts['survived']} unexplained survivor(s)", flush=True)
            for m in mine:
                print(f"    {m}", flush=True)

        total = [sum(int(r[i]) for r in rows) for i in range(1, 6)]
        overall = (total[0] - total[4]) / total[0] * 100 if total[0] else 100.0
        rows.append(("total", *total, f"{overall:.1f}", f"{time.perf_counter() - t_start:.0f} s"))
        print(f"\nload average {os.getloadavg()[0]:.2f}; jobs {opts.jobs}; score = (killed + timeout + explained) "
              "/ mutants")
        print(table(("module", "mutants", "killed", "timeout", "explained", "survived", "score %", "time"), rows))
        print(f"\nsurvivors ({len(survivors)}):" if survivors else "\nno unexplained survivors")
        for m in survivors:
            print(f"  {m}")
        stale = [k for k in known if k not in used and k.split(":")[0] in
                 {m.file for ms in found.values() for m in ms}]
        if stale:
            print(f"\n{len(stale)} entr(ies) of {EQUIVALENT.name} matched no surviving mutant (stale?):")
            for k in stale:
                print(f"  {k}")
        _compare_and_write(Path(opts.json), report, survivors, names)
        while not jobs.empty():
            jobs.get().close()
    finally:
        if opts.keep:
            print(f"copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _compare_and_write(path: Path, report: dict[str, object], survivors: list[Mutant], names: list[str]) -> None:
    now = {m.key: str(m) for m in survivors}
    if path.is_file():
        before = json.loads(path.read_text())
        old = {k: v for k, v in before.get("survivors", {}).items()
               if any(k.startswith(f) for n in names for f in TARGETS[n].files)}
        new, gone = sorted(set(now) - set(old)), sorted(set(old) - set(now))
        print(f"\nsince the previous run ({before.get('when', '?')}): {len(new)} new survivor(s), "
              f"{len(gone)} gone")
        for k in new:
            print(f"  + {now[k]}")
        for k in gone:
            print(f"  - {old[k]}")
        # keep the other modules' survivors so a --module run does not forget them
        kept = {k: v for k, v in before.get("survivors", {}).items() if k not in old}
        modules = before.get("modules", {}) | report
    else:
        kept, modules = {}, report
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "modules": modules, "survivors": kept | now}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"survivors written to {path}")


if __name__ == "__main__":
    raise SystemExit(main())
