"""The draft-07 validator's fast path: a schema compiled to Python source, one function per schema that a `$ref`,
a loop or a combinator calls, everything else inlined into it; compiled once a schema is called often (Lazy).

Why: the checks were nested closures, a Python call per keyword and per property; a record (a trial record has
~60 values to check) cost ~60 calls, and every record a run writes or reads is validated. One generated function
with the checks inlined answers the same question with a handful of calls. Same rules as draft7.py's error form
(which tests/unit/spec/test_draft7.py proves against jsonschema, fast path included); only valid/invalid here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Test = Callable[[Any], bool]

_MAX_INDENT = 40  # deeper than this, a subschema becomes a function of its own (Python limits nesting)
_IS_NUMBER = "((%s).__class__ is not bool and isinstance(%s, (int, float)))"


def _always(x: Any) -> bool:
    return True


def _never(x: Any) -> bool:
    return False


COLD_CALLS = 8  # a schema's first calls walk it (its error form); the next one compiles it


class Lazy:
    """The test of one schema: its first COLD_CALLS calls `walk` it (no compiling: the editor's `validate FILE`
    validates one spec once, and compiling the spec schema cost it ~40 ms), then it is compiled by `generate`
    and called directly (a record schema, validated a few times per trial)."""

    __slots__ = ("calls", "fn", "generate", "schema", "walk")

    def __init__(self, schema: Any, *, walk: Callable[[Any, Any], bool], generate: Callable[[Any], Test]) -> None:
        self.schema, self.walk, self.generate = schema, walk, generate
        self.fn: Test | None = None
        self.calls = 0

    def __call__(self, x: Any) -> bool:
        fn = self.fn
        if fn is not None:
            return fn(x)
        self.calls += 1
        if self.calls <= COLD_CALLS:
            return self.walk(x, self.schema)
        fn = self.fn = self.generate(self.schema)  # two threads may both make it: the same function either way
        return fn(x)


class Generator:
    """Generates the function of one schema: its checks inlined, down through its properties; a subschema it calls
    (through `$ref`, a loop or a combinator) is called through the test `make` gives for it.

    `known`: id(schema) → its test (the validator's); `resolve`: a `$ref` → its target; `strict`: an "integer" is
    only what was written as one."""

    def __init__(self, *, known: dict[int, Test], resolve: Callable[[str], Any], strict: bool,
                 equal: Callable[[Any, Any], bool], make: Callable[[Any], Test]) -> None:
        self.known, self.resolve, self.strict, self.make = known, resolve, strict, make
        self.ns: dict[str, Any] = {"equal": equal, "_always": _always, "_never": _never}
        self.names: dict[int, str] = {}  # id(schema) → its function's name: the one being generated
        self.defs: list[str] = []
        self.tail: list[str] = []  # module-level statements that name the functions (dispatch tables)
        self.n = 0

    def compile(self, schema: Any) -> Test:
        name = self.function(schema)
        exec(compile("".join(self.defs + self.tail), "<draft7 schema>", "exec"), self.ns)
        fn: Test = self.ns[name]
        self.known[id(schema)] = fn  # later generations call it directly, not through its Lazy
        return fn

    # --- names ------------------------------------------------------------------------------------------------

    def _fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, value: Any, prefix: str = "c") -> str:
        name = self._fresh(prefix)
        self.ns[name] = value
        return name

    def function(self, schema: Any) -> str:
        """The name of a function testing `schema`: the one being generated, or the test `make` gives (compiled
        when it is called often enough: Lazy)."""
        if schema is True or schema == {}:
            return "_always"
        if schema is False:
            return "_never"
        name = self.names.get(id(schema))
        if name is not None:
            return name
        if self.names:
            return self.const(self.make(schema), "t")
        name = self.names[id(schema)] = self._fresh("f")
        body: list[str] = []
        self.emit(schema, "x", body, 1)
        self.defs.append(f"def {name}(x):\n{''.join(body)}    return True\n")
        return name

    # --- checks, inlined ------------------------------------------------------------------------------------

    def emit(self, schema: Any, var: str, out: list[str], depth: int) -> None:
        """Lines (at `depth`) that `return False` unless `var` is valid under `schema`."""
        pad = "    " * depth
        if schema is True:
            return
        if schema is False:
            out.append(f"{pad}return False\n")
            return
        if "$ref" in schema:  # draft-07: siblings of $ref are ignored
            out.append(f"{pad}if not {self.function(self.resolve(schema['$ref']))}({var}): return False\n")
            return
        if depth > _MAX_INDENT:
            out.append(f"{pad}if not {self.function(schema)}({var}): return False\n")
            return
        for key, value in schema.items():
            make = getattr(self, "_k_" + key, None) if key in _KEYWORDS else None
            if make is not None:
                make(value, schema, var, out, depth)

    def _type_test(self, name: str, var: str) -> str:
        if name == "object":
            return f"isinstance({var}, dict)"
        if name == "array":
            return f"isinstance({var}, list)"
        if name == "string":
            return f"isinstance({var}, str)"
        if name == "boolean":
            return f"isinstance({var}, bool)"
        if name == "null":
            return f"{var} is None"
        if name == "number":
            return _IS_NUMBER % (var, var)
        whole = f"(isinstance({var}, int) and {var}.__class__ is not bool)"
        if self.strict:
            return whole
        return f"({whole} or (isinstance({var}, float) and {var}.is_integer()))"

    def _k_type(self, types: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        names = [types] if isinstance(types, str) else list(types)
        test = " or ".join(self._type_test(n, var) for n in names) or "False"
        out.append(f"{'    ' * depth}if not ({test}): return False\n")

    def _k_properties(self, props: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        if not props:
            return
        pad = "    " * depth
        out.append(f"{pad}if isinstance({var}, dict):\n")
        for name, sub in props.items():
            if sub is True or sub == {}:
                continue
            child = self._fresh("x")
            out.append(f"{pad}    if {name!r} in {var}:\n{pad}        {child} = {var}[{name!r}]\n")
            self.emit(sub, child, out, depth + 2)
        out.append(f"{pad}    pass\n")

    def _k_patternProperties(self, props: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        for pattern, sub in props.items():
            rx, fn = self.const(re.compile(pattern), "r"), self.function(sub)
            out.append(f"{pad}if isinstance({var}, dict):\n"
                       f"{pad}    for k, w in {var}.items():\n"
                       f"{pad}        if {rx}.search(k) and not {fn}(w): return False\n")

    def _k_additionalProperties(self, ap: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        if ap is True or (not isinstance(ap, dict) and ap):
            return
        sub = self.function(ap) if isinstance(ap, dict) else None
        if sub == "_always":
            return
        pad = "    " * depth
        known = self.const(frozenset(schema.get("properties", {})), "p")
        patterns = "|".join(schema.get("patternProperties", {}))
        extra = f"k not in {known}"
        if patterns:
            extra += f" and not {self.const(re.compile(patterns), 'r')}.search(k)"
        fail = f"not {sub}({var}[k])" if sub else "True"
        out.append(f"{pad}if isinstance({var}, dict):\n"
                   f"{pad}    for k in {var}:\n"
                   f"{pad}        if {extra} and {fail}: return False\n")

    def _k_propertyNames(self, names: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        pad, fn = "    " * depth, self.function(names)
        out.append(f"{pad}if isinstance({var}, dict):\n{pad}    for k in {var}:\n"
                   f"{pad}        if not {fn}(k): return False\n")

    def _k_required(self, names: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        if names:
            test = " and ".join(f"{n!r} in {var}" for n in names)
            out.append(f"{'    ' * depth}if isinstance({var}, dict) and not ({test}): return False\n")

    def _k_items(self, items: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        fn = self.function(items)
        if fn != "_always":
            pad = "    " * depth
            out.append(f"{pad}if isinstance({var}, list):\n{pad}    for w in {var}:\n"
                       f"{pad}        if not {fn}(w): return False\n")

    def _k_const(self, value: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        c = self.const(value)
        test = f"{var} == {c}" if isinstance(value, str) else f"equal({var}, {c})"
        out.append(f"{'    ' * depth}if not ({test}): return False\n")

    def _k_enum(self, values: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        if all(isinstance(e, str) for e in values):
            test = f"isinstance({var}, str) and {var} in {self.const(frozenset(values))}"
        else:
            test = f"any(equal(e, {var}) for e in {self.const(list(values))})"
        out.append(f"{'    ' * depth}if not ({test}): return False\n")

    def _bound(self, op: str, bound: Any, var: str, out: list[str], depth: int) -> None:
        c = self.const(bound)
        out.append(f"{'    ' * depth}if {_IS_NUMBER % (var, var)} and not ({var} {op} {c}): return False\n")

    def _k_minimum(self, bound: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._bound(">=", bound, var, out, depth)

    def _k_maximum(self, bound: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._bound("<=", bound, var, out, depth)

    def _k_exclusiveMinimum(self, bound: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._bound(">", bound, var, out, depth)

    def _k_exclusiveMaximum(self, bound: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._bound("<", bound, var, out, depth)

    def _size(self, kind: str, op: str, limit: Any, var: str, out: list[str], depth: int) -> None:
        out.append(f"{'    ' * depth}if isinstance({var}, {kind}) and not (len({var}) {op} {self.const(limit)}): "
                   "return False\n")

    def _k_minLength(self, limit: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._size("str", ">=", limit, var, out, depth)

    def _k_maxLength(self, limit: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._size("str", "<=", limit, var, out, depth)

    def _k_minItems(self, limit: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._size("list", ">=", limit, var, out, depth)

    def _k_maxItems(self, limit: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._size("list", "<=", limit, var, out, depth)

    def _k_minProperties(self, limit: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._size("dict", ">=", limit, var, out, depth)

    def _k_maxProperties(self, limit: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        self._size("dict", "<=", limit, var, out, depth)

    def _k_pattern(self, pattern: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        rx = self.const(re.compile(pattern), "r")
        out.append(f"{'    ' * depth}if isinstance({var}, str) and {rx}.search({var}) is None: return False\n")

    def _k_allOf(self, subs: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        dispatch = _discriminated(subs)
        if dispatch is None:
            for sub in subs:
                self.emit(sub, var, out, depth)
            return
        # allOf: [{if: {properties: {K: {const: c}}, required: [K]}, then: S}, …] — only the branch whose constant
        # equals x[K] can apply when x[K] is a string; anything else takes the general path.
        key, branches = dispatch
        table = self._fresh("d")
        self.tail.append(f"{table} = {{{', '.join(f'{c!r}: {self.function(s)}' for c, s in branches.items())}}}\n")
        b = self._fresh("b")
        out.append(f"{pad}if isinstance({var}, dict) and isinstance({var}.get({key!r}), str):\n"
                   f"{pad}    {b} = {table}.get({var}[{key!r}])\n"
                   f"{pad}    if {b} is not None and not {b}({var}): return False\n"
                   f"{pad}else:\n")
        for sub in subs:
            self.emit(sub, var, out, depth + 1)
        out.append(f"{pad}    pass\n")

    def _k_anyOf(self, subs: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        test = " or ".join(f"{self.function(s)}({var})" for s in subs) or "False"
        out.append(f"{'    ' * depth}if not ({test}): return False\n")

    def _k_oneOf(self, subs: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        count = " + ".join(f"bool({self.function(s)}({var}))" for s in subs) or "0"
        out.append(f"{'    ' * depth}if ({count}) != 1: return False\n")

    def _k_not(self, sub: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        out.append(f"{'    ' * depth}if {self.function(sub)}({var}): return False\n")

    def _k_if(self, cond: Any, schema: Any, var: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        out.append(f"{pad}if {self.function(cond)}({var}):\n")
        self.emit(schema.get("then", True), var, out, depth + 1)
        out.append(f"{pad}    pass\n{pad}else:\n")
        self.emit(schema.get("else", True), var, out, depth + 1)
        out.append(f"{pad}    pass\n")


_KEYWORDS = frozenset(name[3:] for name in vars(Generator) if name.startswith("_k_"))


def _discriminated(subs: Any) -> tuple[str, dict[str, Any]] | None:
    """(K, {c: S}) when every sub is `{if: {properties: {K: {const: c}}, required: [K]}, then: S}`, one K, the c
    distinct strings; else None."""
    key, table = None, {}
    for sub in subs:
        cond = sub.get("if") if isinstance(sub, dict) else None
        if not (isinstance(cond, dict) and set(sub) == {"if", "then"} and set(cond) == {"properties", "required"}
                and len(cond["properties"]) == 1 and cond["required"] == list(cond["properties"])):
            return None
        (name, const), = cond["properties"].items()
        if not (isinstance(const, dict) and set(const) == {"const"} and isinstance(const["const"], str)):
            return None
        if key not in (None, name) or const["const"] in table:
            return None
        key, table[const["const"]] = name, sub["then"]
    return (key, table) if key is not None else None
