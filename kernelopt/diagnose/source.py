"""Facts about kernel sources, read as text: never imported, never run.

Python (Triton) sources are parsed with :mod:`ast`; CUDA, C++ and OpenCL sources, and Python
that does not parse, with regular expressions. What is computed: complexity (lines,
branches, compile-time knobs, autotune configurations), per-call allocations in host
launcher code (a float64 reference beside the launcher is not one), numeric-precision
suspects, whether a technique or a shape guard is present, the loops a kernel bounds by a
length it loads, and the tensor sizes a launch grid spans. Fragments that do not parse on
their own (the added and removed lines of a diff snapshot) are counted line by line
(:func:`line_counts`).
"""

from __future__ import annotations

import ast
import functools
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence

import attrs

from kernelopt.experiments.log import KernelSource

__all__ = [
    "Allocation",
    "Complexity",
    "LineCounts",
    "Suspect",
    "allocated_when_omitted",
    "allocations",
    "complexity",
    "device_only",
    "find_pattern",
    "float32_dots",
    "grid_sizes",
    "guard_present",
    "length_bounded_loop",
    "line_counts",
    "off_launch_path",
    "parse_python",
    "persistent_buffers",
    "precision_suspects",
    "prose_spans",
    "reference_functions",
]

_ALLOC_NAMES = frozenset(
    {
        "empty",
        "zeros",
        "ones",
        "full",
        "empty_like",
        "zeros_like",
        "ones_like",
        "full_like",
        "new_empty",
        "new_zeros",
        "new_ones",
        "new_full",
        "empty_strided",
    }
)
_OUT_PARAMS = re.compile(
    r"^(?:out|output|o|lse|workspace|buf|buffer|tmp|scratch|.*_out|out_.*|.*_buf|.*_buffer)$"
)
_CACHE_DECORATORS = frozenset({"lru_cache", "cache", "cached_property"})
# Loops of a kernel: ``range``, ``tl.range``, ``tl.static_range``.
_RANGES = frozenset({"range", "static_range"})
# A pool used anywhere in the file: its allocations are the pool's business.
_PERSISTENT = re.compile(r"BufferPool|persistent_buffers")
_CPP_ALLOC = re.compile(
    r"\b(?:torch|at)::(?:empty|zeros|ones|full|empty_like|zeros_like)\s*\(|\bcudaMalloc\s*\("
)
_CPP_BRANCH = re.compile(r"\bif\s*\(|\bfor\s*\(|\bwhile\s*\(|\bswitch\s*\(|\?[^:;\n]+:")
_PY_LINE_COMMENT = re.compile(r"^\s*(?:#|$)")
_C_LINE_COMMENT = re.compile(r"^\s*(?://|/\*|\*|$)")
# Triton's ``tl`` and Gluon's ``gl`` spell compile-time parameters and selects alike.
_PY_CONSTEXPR = re.compile(r"([A-Za-z_]\w*)\s*:\s*(?:tl|gl)\.constexpr\b")
# ``NAME: gl.constexpr = value`` as a statement names a constant (a layout, a derived size),
# not a knob; a parameter with a default, on its own signature line, ends with a comma.
_PY_CONSTEXPR_CONSTANT = re.compile(r"^\s*([A-Za-z_]\w*)\s*:\s*(?:tl|gl)\.constexpr\s*=(?!=)")
_WHERE = re.compile(r"\b(?:tl|gl)\.where\(")
# A statement header ends its line with ``:`` (or opens a condition continued below),
# which keeps prose lines of docstrings that start with "for" or "if" out.
_PY_BRANCH_STATEMENT = re.compile(
    r"^(\s*(?:(?:el)?if|while|(?:async\s+)?for)\b).*(?::|\(|\\)\s*(?:#.*)?$"
)
# An ``if`` pairs with the first ``else`` after it; one that meets another ``if`` first
# leaves the pairing to that one (the count is the same). Without that stop, each ``if`` of
# a long line of them was scanned to the line's end (quadratic).
_PY_CONDITIONAL = re.compile(r"\bif\b(?:(?!\bif\b)[^#])*?\belse\b")


def parse_python(text: str) -> ast.Module | None:
    """The module AST of ``text``, or None when it does not parse (never raises)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return None


@attrs.frozen(kw_only=True)
class Complexity:
    """How complex a kernel source is: code lines, branches, compile-time knobs, autotune
    configurations (None when the space could not be sized statically).

    In Python a knob is a distinct name of a ``tl.constexpr``/``gl.constexpr`` parameter,
    however many functions take it: ``knobs`` are those names and ``constexpr_names`` every
    name annotated so, constants (``blk: gl.constexpr = gl.BlockedLayout(...)``) included.
    In other languages each ``constexpr`` is a knob, and both are None.
    """

    lines: int
    branches: int
    constexprs: int
    autotune_configs: int | None
    knobs: frozenset[str] | None = None
    constexpr_names: frozenset[str] | None = None

    def knob_growth(self, before: Complexity) -> int:
        """The knobs this source has and ``before`` lacked, minus those it dropped.

        By name in Python: a knob is new when ``before`` held no compile-time name like
        it, so a helper that takes the kernel's knobs or constants as parameters adds none;
        one is dropped when no compile-time name like it is left. Otherwise the change in
        :attr:`constexprs`.
        """
        return _name_growth(
            (before.knobs, before.constexpr_names, before.constexprs),
            (self.knobs, self.constexpr_names, self.constexprs),
        )


# A side of a change, for :func:`_name_growth`: its knob names, every compile-time name, and
# its knob count (the names are None where knobs are counted as words).
_Side = tuple[frozenset[str] | None, frozenset[str] | None, int]


def _name_growth(before: _Side, after: _Side, held: frozenset[str] = frozenset()) -> int:
    """New knob names of ``after`` minus knob names dropped from ``before``; compile-time
    names in ``held`` are on both sides. Counts when either side has no names."""
    old_knobs, old_names, old_count = before
    new_knobs, new_names, new_count = after
    if old_knobs is None or new_knobs is None:
        return new_count - old_count
    added = new_knobs - (old_names or old_knobs) - held
    dropped = old_knobs - (new_names or new_knobs) - held
    return len(added) - len(dropped)


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        elif isinstance(target, ast.Name):
            names.add(target.id)
    return names


def _assignments(module: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for node in ast.walk(module):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            found.setdefault(node.targets[0].id, node.value)
        elif isinstance(node, ast.FunctionDef):
            # configs built by a helper: ``def get_configs(): return [...]``
            for stmt in node.body:
                if isinstance(stmt, ast.Return) and stmt.value is not None:
                    found.setdefault(f"{node.name}()", stmt.value)
    return found


def _size(node: ast.expr | None, names: dict[str, ast.expr], depth: int = 0) -> int | None:
    """How many items ``node`` yields, when that is knowable without running anything."""
    if node is None or depth > 8:
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        total = 0
        for item in node.elts:
            if isinstance(item, ast.Starred):
                inner = _size(item.value, names, depth + 1)
                if inner is None:
                    return None
                total += inner
            else:
                total += 1
        return total
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        product = 1
        for generator in node.generators:
            inner = _size(generator.iter, names, depth + 1)
            if inner is None:
                return None
            product *= inner
        return product
    if isinstance(node, ast.Name) and node.id in names:
        return _size(names[node.id], names, depth + 1)
    if isinstance(node, ast.BinOp):
        left, right = _size(node.left, names, depth + 1), _size(node.right, names, depth + 1)
        if isinstance(node.op, ast.Add) and left is not None and right is not None:
            return left + right
        if isinstance(node.op, ast.Mult):
            for seq, other in ((left, node.right), (right, node.left)):
                if (
                    seq is not None
                    and isinstance(other, ast.Constant)
                    and isinstance(other.value, int)
                ):
                    return seq * other.value
        return None
    if isinstance(node, ast.Call):
        func = node.func
        name = (
            func.attr
            if isinstance(func, ast.Attribute)
            else func.id
            if isinstance(func, ast.Name)
            else ""
        )
        if name == "range":
            values = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, int)
            ]
            if len(values) == len(node.args) and values:
                return len(range(*values))
            return None
        if name == "product":
            product = 1
            for arg in node.args:
                inner = _size(arg, names, depth + 1)
                if inner is None:
                    return None
                product *= inner
            return product
        if name in {"list", "tuple", "set", "sorted"} and node.args:
            return _size(node.args[0], names, depth + 1)
        if f"{name}()" in names:
            return _size(names[f"{name}()"], names, depth + 1)
    return None


def _autotune_configs(module: ast.Module) -> int | None:
    names = _assignments(module)
    total: int | None = None
    for node in ast.walk(module):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = (
            func.attr
            if isinstance(func, ast.Attribute)
            else func.id
            if isinstance(func, ast.Name)
            else ""
        )
        if name != "autotune":
            continue
        configs = next(
            (k.value for k in node.keywords if k.arg == "configs"),
            node.args[0] if node.args else None,
        )
        size = _size(configs, names)
        if size is not None:
            total = (total or 0) + size
    return total


def complexity(source: KernelSource) -> Complexity:
    """Lines, branches, compile-time knobs and autotune configurations of ``source``."""
    text = source.text
    module = parse_python(text) if source.language == "python" else None
    comment = _PY_LINE_COMMENT if source.language == "python" else _C_LINE_COMMENT
    lines = sum(1 for line in text.split("\n") if not comment.match(line))
    # Python names its knobs line by line, whether it parses or not.
    knobs, names = _knob_names(text.split("\n")) if source.language == "python" else (None, None)
    constexprs = len(knobs) if knobs is not None else len(re.findall(r"\bconstexpr\b", text))
    if module is not None:
        branches = sum(
            isinstance(n, (ast.If, ast.IfExp, ast.While, ast.For)) for n in ast.walk(module)
        )
        branches += len(_WHERE.findall(text))
        # Without the word there is no autotune call to size: skip two walks of the tree.
        configs = _autotune_configs(module) if "autotune" in text else None
        if configs is None and "autotune" in text:
            counted = len(re.findall(r"\bConfig\(", text))
            configs = counted or None
    else:
        branches = len(_CPP_BRANCH.findall(text))
        counted = len(re.findall(r"\bConfig\(", text))
        configs = counted or None
    return Complexity(
        lines=lines,
        branches=branches,
        constexprs=constexprs,
        autotune_configs=configs,
        knobs=knobs,
        constexpr_names=names,
    )


@attrs.frozen(kw_only=True)
class LineCounts:
    """Code lines, branches and compile-time knobs in a run of lines, such as the lines a
    diff adds or removes.

    In Python, ``knobs`` are the knobs' names (``constexprs`` is how many) and
    ``constexpr_names`` every name annotated ``tl.constexpr``/``gl.constexpr``, constants
    included; both are None in other languages, where each ``constexpr`` counts.
    """

    lines: int
    branches: int
    constexprs: int
    knobs: frozenset[str] | None = None
    constexpr_names: frozenset[str] | None = None

    def knob_growth(self, removed: LineCounts, context: LineCounts | None = None) -> int:
        """The knobs these added lines bring, against the ``removed`` lines of the same
        change and the ``context`` lines it leaves as they were.

        By name in Python: an added knob is new when neither the removed nor the context
        lines name it (as a knob or a constant), and a removed one is dropped when neither
        the added nor the context lines do. Otherwise :attr:`constexprs` added minus
        removed.

        Parameters
        ----------
        removed : LineCounts
            The lines the same change removes.
        context : LineCounts or None
            The lines it shows unchanged (a diff's context lines), which the file holds
            before and after; None when there are none to go by.

        Returns
        -------
        int
            New knobs minus dropped ones.
        """
        held = (context.constexpr_names if context is not None else None) or frozenset()
        return _name_growth(
            (removed.knobs, removed.constexpr_names, removed.constexprs),
            (self.knobs, self.constexpr_names, self.constexprs),
            held,
        )


def _python_branches(line: str) -> int:
    statement = _PY_BRANCH_STATEMENT.match(line)
    # The header's own keyword is one branch; conditional expressions in it count too.
    rest = line[statement.end(1) :] if statement else line
    return (
        (1 if statement else 0)
        + len(_PY_CONDITIONAL.findall(rest.split("#", 1)[0]))
        + len(_WHERE.findall(line))
    )


def _constexprs(line: str) -> tuple[list[str], list[str]]:
    """The names ``line`` annotates ``tl.constexpr``/``gl.constexpr``: (parameters,
    constants)."""
    code = line.split("#", 1)[0].rstrip()
    constant = _PY_CONSTEXPR_CONSTANT.match(code)
    if constant is not None and not code.endswith(","):
        return [], [constant.group(1)]
    return _PY_CONSTEXPR.findall(code), []


def _knob_names(lines: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The knobs of Python ``lines`` (distinct parameter names: helpers that take the
    kernel's knobs add none) and every name they annotate as compile-time."""
    parameters: set[str] = set()
    constants: set[str] = set()
    for line in lines:
        named, defined = _constexprs(line)
        parameters.update(named)
        constants.update(defined)
    return frozenset(parameters), frozenset(parameters | constants)


def line_counts(lines: Iterable[str], language: str) -> LineCounts:
    """Code lines, branches and compile-time knobs of ``lines``, counted line by line.

    For fragments that do not parse on their own, such as the added or removed lines of a
    diff. Counted as :func:`complexity` counts a whole file: code lines are those that are
    neither blank nor comments; in Python (``language == "python"``), ``if``/``elif``/
    ``for``/``while`` statements, conditional expressions and ``tl.where``/``gl.where``
    are branches and the distinct names of ``: tl.constexpr``/``: gl.constexpr``
    parameters are knobs (a statement ``NAME: gl.constexpr = value`` names a constant, not
    a knob); in other languages, C-style conditions, loops and ternaries are branches and
    ``constexpr`` is a knob. So added minus removed lines and branches is the change a diff
    makes, up to statements split over several lines; knobs, being names, change by the
    names one side holds and the other does not (:meth:`LineCounts.knob_growth`).
    """
    python = language == "python"
    comment = _PY_LINE_COMMENT if python else _C_LINE_COMMENT
    code = [line for line in lines if not comment.match(line)]
    if python:
        branches = sum(_python_branches(line) for line in code)
        knobs, names = _knob_names(code)
        return LineCounts(
            lines=len(code),
            branches=branches,
            constexprs=len(knobs),
            knobs=knobs,
            constexpr_names=names,
        )
    branches = sum(len(_CPP_BRANCH.findall(line)) for line in code)
    constexprs = sum(len(re.findall(r"\bconstexpr\b", line)) for line in code)
    return LineCounts(lines=len(code), branches=branches, constexprs=constexprs)


@attrs.frozen(kw_only=True)
class Allocation:
    """A per-call allocation in host code: where, the call, the function it is in.

    ``per_launch`` is True for an allocation inside an allocator handed to
    ``triton.set_allocator``: Triton calls it at every launch of a kernel that needs global
    scratch (device-side tensor descriptors, for one), so it allocates once per launch
    wherever it is defined. ``function`` then names the allocator (``"<lambda>"`` for a
    lambda). ``default_of`` names the parameter an allocation stands in for when a call
    leaves it out.
    """

    path: str
    line: int
    call: str
    function: str
    text: str
    per_launch: bool = False
    default_of: str = ""
    """The parameter whose default this allocation is (``partials`` for ``if partials is
    None: pg = torch.empty(...)``): scratch the function allocates on every call made
    without it, and does not return. ``""`` for an allocation behind no such check."""


def _is_device(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = _decorator_names(node)
    return bool(names & {"jit", "autotune", "heuristics", "kernel", "njit", "cuda"})


_NONE_TEST = re.compile(r"\bis None\b|\bnot in\b|\bis not None\b|== None")


def _none_check(node: ast.AST) -> bool:
    """Whether ``node`` branches on a None check (``if out is None:``, ``a if out is None
    else b``) or on a key missing from a cache (``if key not in cache:``)."""
    return isinstance(node, (ast.If, ast.IfExp)) and bool(_NONE_TEST.search(ast.unparse(node.test)))


def _guarded_by_none_check(ancestors: Sequence[ast.AST]) -> bool:
    return any(_none_check(node) for node in ancestors)


def _allocates_unguarded(node: ast.AST) -> bool:
    """Whether ``node`` allocates outside a None check within it (``torch.empty_like(x) if
    out is None else out`` does not)."""
    if _is_allocation(node):
        return True
    return not _none_check(node) and any(
        _allocates_unguarded(child) for child in ast.iter_child_nodes(node)
    )


def _takes_buffer(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether ``function`` uses its parameter ``name`` as a buffer from the caller: reads
    it, and never replaces it with a fresh allocation outside a None check. A parameter
    left unused, or overwritten by ``torch.empty`` on every call, keeps nothing."""
    read = False

    def visit(node: ast.AST, guarded: bool) -> bool:
        nonlocal read
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            read = True
        if (
            not guarded
            and isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(
                isinstance(t, ast.Name) and t.id == name
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            and node.value is not None
            and _allocates_unguarded(node.value)
        ):
            return False
        guarded = guarded or _none_check(node)
        return all(visit(child, guarded) for child in ast.iter_child_nodes(node))

    kept = all(visit(statement, False) for statement in function.body)
    return kept and read


def _assigned_to_cache(parent: ast.AST | None) -> bool:
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets)
    return False


def _launches_kernel(function: ast.AST) -> bool:
    """Whether ``function`` launches a kernel itself (``kernel[grid](...)``)."""
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
        for node in ast.walk(function)
    )


def _kept_across_calls(
    assignment: ast.AST | None, function: ast.AST | None, conditional: bool
) -> bool:
    """Whether an allocation assigned by ``assignment`` is kept for later calls: stored on
    an object or in a container, unless the function that launches the kernel stores it
    unconditionally (``conditional``: under an ``if``), which replaces it every call."""
    if not _assigned_to_cache(assignment):
        return False
    return conditional or function is None or not _launches_kernel(function)


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _allocators(module: ast.Module) -> tuple[set[str], list[ast.Lambda]]:
    """What ``set_allocator(...)`` is given: names of functions, and lambdas written inline
    (or assigned to a name first)."""
    names: set[str] = set()
    lambdas: list[ast.Lambda] = []
    assigned: dict[str, ast.Lambda] = {}
    for node in ast.walk(module):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Lambda)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            assigned[node.targets[0].id] = node.value
    for node in ast.walk(module):
        if not isinstance(node, ast.Call) or _call_name(node) != "set_allocator":
            continue
        given = node.args[0] if node.args else None
        given = next((k.value for k in node.keywords if k.arg == "allocator"), given)
        if isinstance(given, ast.Lambda):
            lambdas.append(given)
        elif isinstance(given, ast.Name):
            if given.id in assigned:
                lambdas.append(assigned[given.id])
            else:
                names.add(given.id)
        elif isinstance(given, ast.Attribute):
            names.add(given.attr)  # a method: ``triton.set_allocator(self.alloc)``
    return names, lambdas


# An output parameter: what its default allocates is the result the caller receives, which
# the caller owns (``if out is None: out = torch.empty_like(x)`` is not counted).
_OUTPUT_PARAMS = re.compile(r"^(?:out|output|o|result|.*_out|out_.*|.*_output)$")
# A function named as a reference the kernel is checked against, not a launcher.
_REFERENCE_NAME = re.compile(
    r"(?:^|_)(?:ref|reference|naive|baseline|golden|oracle|eager)(?:_|$)", re.IGNORECASE
)
# float64 math is a reference's: a GPU kernel's launcher does not compute in it.
_FLOAT64 = re.compile(r"\bfloat64\b|\.double\(\)|\btorch\.double\b")

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _parameters(function: _Function) -> set[str]:
    arguments = function.args
    return {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}


def _none_parameter(test: ast.expr, function: _Function) -> str | None:
    """The parameter of ``function`` that ``test`` checks for None (``partials is None``),
    or None for any other test."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
        and test.left.id in _parameters(function)
    ):
        return test.left.id
    return None


def _returned_names(function: _Function) -> set[str]:
    """The names ``function``'s return statements use (``dx, dg, db`` of ``return dx, dg,
    db``)."""
    return {
        name.id
        for node in ast.walk(function)
        if isinstance(node, ast.Return) and node.value is not None
        for name in ast.walk(node.value)
        if isinstance(name, ast.Name)
    }


def _assigned_names(statement: ast.AST) -> set[str]:
    """The names an assignment binds (``pg`` of ``pg = torch.empty(...)``)."""
    targets = (
        statement.targets
        if isinstance(statement, ast.Assign)
        else [statement.target]
        if isinstance(statement, ast.AnnAssign)
        else []
    )
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _in_branch(check: ast.AST, below: ast.AST) -> bool:
    """Whether ``below`` (the node under ``check`` on the way to an allocation) is in the
    branch a None check takes when the value is None: the ``if`` body, or the first arm
    of a conditional expression."""
    if isinstance(check, ast.IfExp):
        return below is check.body
    return isinstance(check, ast.If) and any(below is statement for statement in check.body)


def _scratch_default(node: ast.AST, ancestors: Sequence[ast.AST], function: ast.AST) -> str | None:
    """The parameter whose None default the allocation ``node`` stands in for, where the
    buffer is scratch: the function allocates it on every call made without that
    parameter and does not return it (``if partials is None: pg = torch.empty(G, N)``).
    None where the allocation is the output the caller receives (returned, or the
    default of an ``out``-style parameter), or is behind another check (a cache's).

    Parameters
    ----------
    node : ast.AST
        The allocation call.
    ancestors : sequence of ast.AST
        The nodes above ``node``, outermost first.
    function : ast.AST
        The function ``node`` is in.
    """
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    chain = [*ancestors, node]
    checks = [a for a in ancestors if _none_check(a)]
    if len(checks) != 1 or function not in ancestors:
        return None
    check = checks[0]
    if chain.index(check) < chain.index(function):
        return None  # a check outside the function: not on its parameter
    assert isinstance(check, (ast.If, ast.IfExp))  # what _none_check accepts
    parameter = _none_parameter(check.test, function)
    below = chain[chain.index(check) + 1]
    if parameter is None or _OUTPUT_PARAMS.match(parameter) or not _in_branch(check, below):
        return None
    under = chain[chain.index(check) + 1 :]
    if any(isinstance(a, ast.Return) for a in under):
        return None  # ``return torch.empty(...)``: the result itself
    # The names bound on the way down: ``pg = torch.empty(...)`` inside the ``if``, or
    # ``ws = torch.empty(...) if ws is None else ws`` around the conditional expression.
    assigned: set[str] = set()
    for statement in chain[chain.index(function) + 1 :]:
        assigned |= _assigned_names(statement)
    returned = _returned_names(function)
    if assigned & returned or parameter in returned:
        return None
    return parameter


def _called_names(function: ast.AST) -> set[str]:
    """The names ``function`` calls (``f`` of ``f(x)``, ``g`` of ``self.g(x)``)."""
    return {
        name
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        for name in [_call_name(node)]
        if name
    }


def _closure(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    """``start`` and every name reached from it along ``edges``."""
    reached = set(start)
    frontier = list(start)
    while frontier:
        for name in edges.get(frontier.pop(), set()):
            if name not in reached:
                reached.add(name)
                frontier.append(name)
    return reached


def reference_functions(module: ast.Module) -> set[str]:
    """The host functions of ``module`` that are references, not launchers: off every
    launch path (they launch no kernel, call no function that does, and are called by
    none), named as a reference (``attn_ref``, ``naive_softmax``) or computing in float64.

    A file that keeps its float64 reference beside the launcher (to check the kernel
    against) allocates in it on every call of the reference, not of the kernel. Empty
    where no function of the file launches a kernel: the launcher is then not known.
    """
    off_path = off_launch_path(module)
    return {
        f.name
        for f in ast.walk(module)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        and f.name in off_path
        and (_REFERENCE_NAME.search(f.name) or _FLOAT64.search(ast.unparse(f)))
    }


def off_launch_path(module: ast.Module) -> set[str]:
    """The host functions of ``module`` that no kernel launch runs: they launch no kernel,
    call no function that does, and are called by none (a test-input builder such as
    ``make_inputs``, a reference, a benchmark's setup).

    What they allocate is allocated when they are called, not on every call of the
    kernel. Empty where no function of the file launches a kernel: the launcher is then
    not known."""
    functions = [
        node
        for node in ast.walk(module)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_device(node)
    ]
    launchers = {f.name for f in functions if any(_launch_call(n) for n in ast.walk(f))}
    if not launchers:
        return set()
    names = {f.name for f in functions}
    calls: dict[str, set[str]] = {}
    for function in functions:
        calls.setdefault(function.name, set()).update(_called_names(function) & names)
    callers: dict[str, set[str]] = {}
    for caller, callees in calls.items():
        for callee in callees:
            callers.setdefault(callee, set()).add(caller)
    on_path = _closure(launchers, calls) | _closure(launchers, callers)
    return names - on_path


def _python_allocations(source: KernelSource, module: ast.Module) -> list[Allocation]:
    lines = source.text.split("\n")
    launches = bool(re.search(r"\]\s*\(", source.text)) and "triton" in source.text
    allocator_names, allocator_lambdas = _allocators(module)
    # Only functions a launch runs allocate per call of the kernel (a reference or a
    # test-input builder beside the launcher allocates when the user calls it).
    references = off_launch_path(module)
    per_call: list[Allocation] = []
    per_launch: list[Allocation] = []

    def record(
        node: ast.Call,
        ancestors: list[ast.AST],
        function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        launch: bool,
    ) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _ALLOC_NAMES:
            return
        owner = func.value
        is_torch = isinstance(owner, ast.Name) and owner.id == "torch"
        if not (is_torch or func.attr.startswith("new_") or func.attr.endswith("_like")):
            return
        inside = ancestors[ancestors.index(function) + 1 :] if function in ancestors else []
        conditional = any(isinstance(a, ast.If) for a in inside)
        # Scratch allocated when a parameter is left out is allocated on every such call;
        # the default of an output (returned to the caller) is not counted.
        default_of = _scratch_default(node, ancestors, function) if not launch else None
        if (_guarded_by_none_check(ancestors) and default_of is None) or _kept_across_calls(
            ancestors[-1] if ancestors else None, function, conditional
        ):
            return
        line = getattr(node, "lineno", 0)
        (per_launch if launch else per_call).append(
            Allocation(
                path=source.path,
                line=line,
                call=f"{'torch.' if is_torch else '.'}{func.attr}",
                function=function.name if not isinstance(function, ast.Lambda) else "<lambda>",
                text=lines[line - 1].strip() if 0 < line <= len(lines) else "",
                per_launch=launch,
                default_of=default_of or "",
            )
        )

    def visit(
        node: ast.AST,
        ancestors: list[ast.AST],
        function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None,
        launch: bool,
    ) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in allocator_names:
                function, launch = node, True
            else:
                if (
                    _is_device(node)
                    or _decorator_names(node) & _CACHE_DECORATORS
                    or node.name in references
                ):
                    return
                # A function that takes out=/workspace= is read like any other: what it
                # allocates outside a None check on them is still allocated every call.
                function, launch = node, False
        elif isinstance(node, ast.Lambda) and any(node is a for a in allocator_lambdas):
            function, launch = node, True
        if isinstance(node, ast.Call) and function is not None:
            record(node, ancestors, function, launch)
        for child in ast.iter_child_nodes(node):
            visit(child, [*ancestors, node], function, launch)

    visit(module, [], None, False)
    # Launcher allocations count in files that launch kernels; an allocator given to
    # set_allocator runs at kernel launches wherever it is written.
    return (per_call if launches else []) + per_launch


def allocations(sources: Iterable[KernelSource]) -> list[Allocation]:
    """Per-call allocations in the host code of ``sources``.

    Counted: allocations in launcher functions of files that launch a kernel, and
    allocations inside an allocator given to ``triton.set_allocator`` (a lambda or a
    function, anywhere in the file; ``per_launch`` marks them). Not counted: allocations
    behind an ``is None`` check (an ``if`` or a conditional expression: the fallback of a
    launcher taking ``out=None``), stored into a cache, and any in a file that uses a
    buffer pool. A launcher that takes ``out``/``workspace`` parameters still counts what
    it allocates outside such a check (an unused ``out=``, scratch beside a real one).
    """
    found: list[Allocation] = []
    for source in sources:
        if _PERSISTENT.search(source.text):
            continue
        if source.language == "python":
            module = parse_python(source.text)
            if module is not None:
                found += _python_allocations(source, module)
                continue
        for number, line in enumerate(source.text.split("\n"), start=1):
            if "__global__" in line:
                continue
            match = _CPP_ALLOC.search(line)
            if match:
                found.append(
                    Allocation(
                        path=source.path,
                        line=number,
                        call=match.group(0).rstrip("("),
                        function="",
                        text=line.strip(),
                    )
                )
    return found


def _host_statement(node: ast.stmt) -> bool:
    """Whether a module-level statement is host code: a function that is not a kernel, a
    class, or anything that runs other than imports, a docstring and constants."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return not _is_device(node)
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
        return False
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return False  # a docstring
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        # ``LOG2E = 1.44``, ``BLOCK: tl.constexpr = 64``: a constant, not a launch.
        return node.value is not None and any(
            isinstance(inner, ast.Call) for inner in ast.walk(node.value)
        )
    return True


def device_only(sources: Iterable[KernelSource]) -> bool:
    """Whether every one of ``sources`` is Python holding kernels alone (``@triton.jit``
    functions, imports, constants): no launcher, no host function, nothing run at import.

    Host code that allocates per call cannot be in such sources; a source in another
    language, or Python that does not parse, may hold host code (False)."""
    found = False
    for source in sources:
        module = parse_python(source.text) if source.language == "python" else None
        if module is None or any(_host_statement(node) for node in module.body):
            return False
        # A launch inside a decorated function is host code too (CuTe DSL's ``@cute.jit``
        # launcher calls ``kernel(...).launch(grid=...)``; Triton's ``k[grid](...)``).
        if any(_launch_call(node) for node in ast.walk(module)):
            return False
        found = True
    return found


def _launch_call(node: ast.AST) -> bool:
    """Whether ``node`` launches a kernel: ``k[grid](...)`` or ``....launch(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return isinstance(func, ast.Subscript) or (
        isinstance(func, ast.Attribute) and func.attr == "launch"
    )


def _is_allocation(node: ast.AST) -> bool:
    """Whether ``node`` calls a torch allocator (``torch.empty``, ``x.new_zeros``, ...)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    name, owner = node.func.attr, node.func.value
    if name not in _ALLOC_NAMES:
        return False
    is_torch = isinstance(owner, ast.Name) and owner.id == "torch"
    return is_torch or name.startswith("new_") or name.endswith("_like")


def _ancestors(root: ast.AST, target: ast.AST) -> list[ast.AST]:
    """The nodes from ``root`` down to ``target``'s parent, outermost first (empty where
    ``target`` is not below ``root``)."""
    for child in ast.iter_child_nodes(root):
        if child is target:
            return [root]
        below = _ancestors(child, target)
        if below:
            return [root, *below]
    return []


def _python_persistence(source: KernelSource, module: ast.Module) -> tuple[int, str] | None:
    """The first line where Python host code keeps or takes its buffers (see
    :func:`persistent_buffers`), or None."""
    launches = bool(re.search(r"\]\s*\(", source.text)) and "triton" in source.text
    lines = source.text.split("\n")

    def at(node: ast.AST) -> tuple[int, str]:
        line = getattr(node, "lineno", 0)
        return line, lines[line - 1].strip() if 0 < line <= len(lines) else ""

    references = reference_functions(module)
    for node in ast.walk(module):
        if (
            not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            or _is_device(node)
            or node.name in references
        ):
            continue
        params = [a.arg for a in node.args.args + node.args.kwonlyargs]
        taken = next((p for p in params if _OUT_PARAMS.match(p) and _takes_buffer(node, p)), None)
        if launches and taken is not None:
            # The caller can pass persistent buffers in.
            return getattr(node, "lineno", 0), f"{node.name}() takes {taken}="
        # What runs only under an ``if`` (a shape check) may keep its buffer for later calls.
        conditional = {
            below
            for branch in ast.walk(node)
            if isinstance(branch, ast.If)
            for below in ast.walk(branch)
        }
        for inner in ast.walk(node):
            if isinstance(inner, ast.If) and re.search(
                r"\bis None\b|\bnot in\b|== None", ast.unparse(inner.test)
            ):
                allocated = next(
                    (
                        n
                        for n in ast.walk(inner)
                        if _is_allocation(n)
                        and _scratch_default(n, _ancestors(node, n), node) is None
                    ),
                    None,
                )
                if allocated is not None:
                    return at(allocated)  # allocated once, on the first call
            if _kept_across_calls(inner, node, inner in conditional) and any(
                _is_allocation(n) for n in ast.walk(inner)
            ):
                return at(inner)  # kept on an object or in a dict across calls
    return None


def allocated_when_omitted(source: KernelSource, line: int) -> tuple[str, ...]:
    """The parameters the host function holding ``line`` of ``source`` allocates only
    where the caller leaves them out (``if q is None: q = torch.empty(...)``), in the
    order it checks them; empty where the line is in no such function, or the source is
    not Python that parses.

    Such a launcher takes its buffers from a caller that passes them and allocates them
    on every call of one that does not: both halves are what it does."""
    module = parse_python(source.text) if source.language == "python" else None
    if module is None:
        return ()
    found: tuple[str, ...] = ()
    for node in ast.walk(module):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not node.lineno <= line <= (node.end_lineno or node.lineno) or _is_device(node):
            continue
        params = {a.arg for a in node.args.args + node.args.kwonlyargs}
        names: list[str] = []
        for inner in ast.walk(node):
            if not isinstance(inner, ast.If):
                continue
            test = inner.test
            if not (
                isinstance(test, ast.Compare)
                and isinstance(test.left, ast.Name)
                and test.left.id in params
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Is)
                and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value is None
            ):
                continue
            name = test.left.id
            if any(
                isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
                and _is_allocation(n.value)
                for n in inner.body
            ):
                names.append(name)
        # The innermost function holding the line is the launcher: a nested one is
        # walked after the function around it.
        if names:
            found = tuple(dict.fromkeys(names))
    return found


def persistent_buffers(sources: Iterable[KernelSource]) -> tuple[KernelSource, int, str] | None:
    """Where the host code of ``sources`` keeps its buffers across calls or takes them from
    the caller: a buffer pool, a launcher taking ``out``/``workspace`` parameters that it
    uses (reads, and never replaces with a fresh allocation outside a None check), an
    allocation behind an ``is None`` check or stored into a cache — the code
    :func:`allocations` does not count as allocating per call.

    Returns
    -------
    (KernelSource, int, str) or None
        The source, the 1-based line and that line's text of the first such place.
    """
    for source in sources:
        pool = _PERSISTENT.search(source.text)
        if pool is not None:
            line = source.text.count("\n", 0, pool.start()) + 1
            return source, line, source.text.split("\n")[line - 1].strip()
        if source.language == "python":
            module = parse_python(source.text)
            if module is not None:
                found = _python_persistence(source, module)
                if found is not None:
                    return source, found[0], found[1]
    return None


@attrs.frozen(kw_only=True)
class Suspect:
    """A numeric-precision suspect found in (or absent from) a kernel source.

    ``found`` is True when the source shows the risky pattern; ``line``/``text`` quote it.
    ``dtype`` is the low-precision type a found accumulator holds (``"bf16"``, ``"fp16"``):
    the name is the catalog's, which says bf16 for both.
    """

    name: str
    catalog_id: str
    found: bool
    path: str = ""
    line: int = 0
    text: str = ""
    advice: str = ""
    dtype: str = ""


def find_pattern(
    sources: Iterable[KernelSource],
    pattern: re.Pattern[str],
    skip: Callable[[KernelSource, int, int], bool] | None = None,
) -> tuple[KernelSource, int, str] | None:
    """The first (source, line, line text) where ``pattern`` matches, or None.

    ``skip(source, start, end)``, when given, passes over the matches it returns True for.
    The search then resumes one character further on, so a match that overlaps a skipped
    one is still found, and each position is still tried once: linear time.
    """
    for source in sources:
        text = source.text
        match = pattern.search(text)
        while match is not None and skip is not None and skip(source, *match.span()):
            match = pattern.search(text, match.start() + 1)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            return source, line, text.split("\n")[line - 1].strip()
    return None


# Comments and docstrings: what a kernel's author says about it, not what it runs. String
# literals are matched too, only so that a "#" or "//" inside one opens no comment. Every
# alternative runs to its closing delimiter or to the end of the text and repeats single
# characters (no nested repeats), so the scan is linear and never backtracks far. A
# triple-quoted string counts as a docstring only where it opens its line (a docstring or a
# bare string statement): one assigned or passed, such as inline CUDA source, is code.
_PY_TRIPLE = (
    r'"""(?:[^"\\]|\\[\s\S]?|"(?!""))*(?:"""|\Z)'
    r"|'''(?:[^'\\]|\\[\s\S]?|'(?!''))*(?:'''|\Z)"
)
_QUOTED = r'"(?:[^"\\\n]|\\[\s\S]?)*"?' r"|'(?:[^'\\\n]|\\[\s\S]?)*'?"
_PY_PROSE = re.compile(
    rf"(?P<doc>^[ \t]*[rRuU]?(?:{_PY_TRIPLE}))"
    r"|(?P<line>#[^\n]*(?:\n[ \t]*#[^\n]*)*)"
    rf"|{_PY_TRIPLE}|{_QUOTED}",
    re.MULTILINE,
)
_C_PROSE = re.compile(
    r"(?P<line>//[^\n]*(?:\n[ \t]*//[^\n]*)*)"
    r"|(?P<block>/\*(?:[^*]|\*(?!/))*(?:\*/|\Z))"
    rf"|{_QUOTED}"
)
_C_LANGUAGES = frozenset({"cuda", "opencl", "cpp"})


def prose_spans(source: KernelSource) -> list[tuple[int, int, bool]]:
    """The comments and docstrings of ``source``, in order, as character offsets.

    CUDA, OpenCL and C++ sources have ``//`` and ``/* */`` comments; every other language
    is read as Python (``#`` comments, and docstrings: triple-quoted strings that open
    their line). Consecutive lines of line comments make one span.

    Parameters
    ----------
    source : KernelSource
        The source to read (text only).

    Returns
    -------
    list of (int, int, bool)
        Start and end offsets into ``source.text`` (delimiters included), and whether the
        span is made of line comments (each line a remark of its own) rather than one
        block of prose (a docstring or a ``/* */`` comment).
    """
    pattern = _C_PROSE if source.language in _C_LANGUAGES else _PY_PROSE
    return [
        (match.start(), match.end(), match.lastgroup == "line")
        for match in pattern.finditer(source.text)
        if match.lastgroup is not None
    ]


# Dot precision settings written out: only these, or float32 operands, put tf32 in play.
_DOT_EXPLICIT_TF32 = re.compile(
    r"input_precision\s*=\s*['\"]tf32['\"]|allow_tf32\s*=\s*True"
    r"|TRITON_F32_DEFAULT[^\n]*['\"]tf32['\"]"
)
_F32_DEFAULT_PRECISE = re.compile(r"TRITON_F32_DEFAULT[^\n]*['\"](?:ieee|tf32x3)['\"]")
_PRECISE = frozenset({"ieee", "tf32x3"})
_CASTS = frozenset({"to", "cast", "astype"})
_CREATORS = frozenset({"zeros", "full", "empty", "ones", "zeros_like", "full_like", "arange"})
_OPAQUE = frozenset({"load", "program_id", "num_programs", "cdiv", "float", "int", "len"})
_EXP2 = re.compile(r"\b(?:tl\.|tl\.math\.|math\.|torch\.)?exp2f?\(|\bexp2\(")
_EXP_E = re.compile(r"\b(?:tl\.exp|tl\.math\.exp|torch\.exp|expf|__expf|math\.exp)\(")
_LOG_E = re.compile(r"\b(?:tl\.log|tl\.math\.log|torch\.log|logf|__logf|math\.log)\(")
_LOG_2 = re.compile(
    r"\blog2f?\(|\bLN2\b|\bln2\b|0\.693147|\bRCP_LN2\b|\bLOG2E\b.*\blog\(", re.IGNORECASE
)
_NEG_INF = re.compile(
    r"float\(\s*['\"]-inf['\"]\s*\)|-float\(\s*['\"]inf['\"]\s*\)|-math\.inf|-INFINITY|-torch\.inf|-np\.inf|-inf\b"
)
_INF_GUARD = re.compile(
    r"==\s*float\(\s*['\"]-inf['\"]\s*\)|==\s*-float\(|isinf|nan_to_num|isnan|l_i\s*==\s*0|m_i\s*==|"
    r"tl\.maximum\(\s*m\w*\s*,\s*-?\d|where\(\s*\w*(?:l|sum)\w*\s*==\s*0|where\(\s*m\w*\s*==",
    re.IGNORECASE,
)
# The shape may be a tuple (``tl.zeros((BLOCK_M, BLOCK_N), dtype=...)``): the arguments
# allow one level of parentheses inside. The two alternatives start on different characters,
# so the scan stays linear.
_BF16_ACC = re.compile(
    r"(?:acc\w*|sum\w*|accum\w*)\s*=\s*(?:tl|torch)\.zeros\((?:[^()]|\([^()]*\))*?dtype\s*=\s*(?:tl|torch)\.(?:bfloat16|float16)"
    r"|out_dtype\s*=\s*tl\.(?:bfloat16|float16)|__nv_bfloat16\s+acc|half\s+acc|__half\s+acc"
    r"|acc\w*\s*=\s*acc\w*\.to\(\s*tl\.(?:bfloat16|float16)\s*\)",
)


def _is_f32(node: ast.expr) -> bool:
    """``tl.float32``, ``torch.float32`` or the string ``"float32"``/``"fp32"``."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("float32", "fp32")
    if isinstance(node, ast.Name):
        return node.id in ("float32", "fp32")
    return isinstance(node, ast.Constant) and node.value in ("float32", "fp32")


class _Scope:
    """The assignments of one function (or of module-level code), by name."""

    def __init__(self, body: Sequence[ast.stmt]) -> None:
        self.assigned: dict[str, list[ast.expr]] = {}
        self.calls: list[ast.Call] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue  # a scope of its own
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                if isinstance(node.target, ast.Name):
                    self.assigned.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, ast.Call):
                self.calls.append(node)
            stack.extend(ast.iter_child_nodes(node))

    def float32(self, node: ast.expr | None, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the text shows ``node`` is a float32 tensor: a cast or creation with a
        float32 dtype, a ``tl.dot`` result (fp32 accumulator), or math on one of those
        (followed through names assigned in the same scope). Loads and arguments, whose
        dtype the text does not show, are not."""
        if node is None or len(seen) > 8:
            return False
        if isinstance(node, ast.Call):
            name = _call_name(node)
            dtypes = [k.value for k in node.keywords if k.arg in ("dtype", "out_dtype")]
            if name in _CASTS:
                # ``x.to(tl.float32)``, ``tl.cast(x, tl.float32)``: the cast decides.
                func = node.func
                module_call = isinstance(func, ast.Name) or (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id in ("tl", "triton")
                )
                given = node.args[1:] if module_call else node.args[:1]
                return any(_is_f32(d) for d in [*given, *dtypes])
            if name == "dot":
                out = next((k.value for k in node.keywords if k.arg == "out_dtype"), None)
                return out is None or _is_f32(out)
            if name in _CREATORS:
                return any(_is_f32(d) for d in [*node.args, *dtypes])
            if name in _OPAQUE:
                return False
            return any(self.float32(a, seen) for a in node.args)
        if isinstance(node, ast.Name):
            if node.id in seen:
                return False
            return any(
                self.float32(value, seen | {node.id}) for value in self.assigned.get(node.id, ())
            )
        if isinstance(node, ast.BinOp):
            return self.float32(node.left, seen) or self.float32(node.right, seen)
        if isinstance(node, ast.UnaryOp):
            return self.float32(node.operand, seen)
        if isinstance(node, ast.IfExp):
            return self.float32(node.body, seen) or self.float32(node.orelse, seen)
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            return self.float32(node.value, seen)  # ``x[:, None]``, ``x.T``
        return False


def _dot_suspect(source: KernelSource, module: ast.Module) -> tuple[int, str] | None:
    """The first ``tl.dot`` that runs at tf32: set so explicitly, or left at the default
    with a float32 operand the text shows; (line, why) or None."""
    text = source.text
    default_precise = _F32_DEFAULT_PRECISE.search(text) is not None
    tf32_named = any(isinstance(n, ast.Constant) and n.value == "tf32" for n in ast.walk(module))
    bodies: list[Sequence[ast.stmt]] = [module.body]
    bodies += [
        n.body for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    found: list[tuple[int, str]] = []
    for body in bodies:
        scope = _Scope(body)
        for call in scope.calls:
            if _call_name(call) != "dot" or len(call.args) < 2:
                continue
            settings = {k.arg: k.value for k in call.keywords if k.arg}
            precision = settings.get("input_precision")
            allow = settings.get("allow_tf32")
            line = getattr(call, "lineno", 0)
            if isinstance(precision, ast.Constant):
                if precision.value == "tf32":
                    found.append((line, "explicit"))
                continue
            if isinstance(allow, ast.Constant):
                if allow.value is True:
                    found.append((line, "explicit"))
                continue
            if precision is not None or allow is not None:
                # A setting passed through a variable: tf32 when the file names it.
                if tf32_named:
                    found.append((line, "explicit"))
                continue
            if not default_precise and (scope.float32(call.args[0]) or scope.float32(call.args[1])):
                found.append((line, "float32"))
    return min(found) if found else None


# A dot precision setting of any value, written out: the kernel chose a precision for
# float32 operands (``ieee`` is the slowest one, and the one tf32 speeds up).
_DOT_PRECISION_SET = re.compile(r"\btf32|input_precision|allow_tf32|TRITON_F32_DEFAULT")
# What a text that cannot be parsed (CUDA, C++) shows of float32 operands.
_F32_WORDS = re.compile(r"\btf32|input_precision|allow_tf32|\bfloat32\b|\bfp32\b", re.IGNORECASE)


def _casts_to_f32(module: ast.Module) -> bool:
    """Whether the module casts anything to float32 (``x.to(tl.float32)``,
    ``tl.cast(x, tl.float32)``): float32 data, in a text that shows no dot."""
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and _call_name(node) in _CASTS:
            given = [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]
            if any(_is_f32(d) for d in given):
                return True
    return False


def _python_float32_dots(module: ast.Module, text: str) -> bool:
    """:func:`float32_dots` for one parsed Python source."""
    if _DOT_PRECISION_SET.search(text):
        return True
    bodies: list[Sequence[ast.stmt]] = [module.body]
    bodies += [
        n.body for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    dots = 0
    for body in bodies:
        scope = _Scope(body)
        for call in scope.calls:
            if _call_name(call) != "dot" or len(call.args) < 2:
                continue
            dots += 1
            if scope.float32(call.args[0]) or scope.float32(call.args[1]):
                return True
    # A float32 accumulator (``tl.zeros(..., dtype=tl.float32)``, ``out_dtype=tl.float32``)
    # says nothing of the inputs: where the text shows its dots, their operands decide.
    return dots == 0 and _casts_to_f32(module)


def float32_dots(sources: Sequence[KernelSource]) -> bool:
    """Whether the sources show a matrix product on float32 inputs, the only kind a dot
    precision setting (tf32, tf32x3, ieee) changes.

    In Python: a precision setting written out (``input_precision=``, ``allow_tf32=``,
    ``TRITON_F32_DEFAULT``), or a ``tl.dot`` whose operand the text shows is float32 (a
    cast, an fp32 creation, another dot's result); a text without any dot, a cast to
    float32. A float32 accumulator is not one: a bf16/fp16 GEMM accumulates in float32
    too. A text that does not parse (CUDA, C++): the words ``tf32``, ``float32``, ``fp32``
    or a precision setting.

    Parameters
    ----------
    sources : sequence of KernelSource
        The kernel sources read.

    Returns
    -------
    bool
        True when any source shows such a product.
    """
    for source in sources:
        module = parse_python(source.text) if source.language == "python" else None
        if module is not None:
            if _python_float32_dots(module, source.text):
                return True
        elif _F32_WORDS.search(source.text):
            return True
    return False


def _dot_suspects(sources: Sequence[KernelSource]) -> tuple[KernelSource, int, str, str] | None:
    for source in sources:
        module = parse_python(source.text) if source.language == "python" else None
        if module is not None:
            hit = _dot_suspect(source, module)
            if hit is not None:
                line, why = hit
                lines = source.text.split("\n")
                text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                return source, line, text, why
            continue
        # CUDA/C++ or Python that does not parse: only a written-out tf32 setting counts.
        match = _DOT_EXPLICIT_TF32.search(source.text)
        if match is not None:
            line = source.text.count("\n", 0, match.start()) + 1
            return source, line, source.text.split("\n")[line - 1].strip(), "explicit"
    return None


# Where a -inf literal starts when the pattern matched the "-inf" inside ``float("-inf")``.
_INSIDE_FLOAT = re.compile(r"-?float\(\s*['\"]$")
_LITERAL = re.compile(r"-?float\(\s*['\"]-?inf['\"]\s*\)|-?[\w.]*inf\w*", re.IGNORECASE)
_LOAD_OTHER = re.compile(r"\bother\s*=\s*$")
_CALL_NAME = re.compile(r"([A-Za-z_][\w.]*)\s*$")
# ``m = ``, ``m_i: tl.tensor = ``, and a C declaration ``float m = `` (a C assignment without
# a type, ``s = -INFINITY;``, may be a mask's write under an ``if``: it stays a suspect).
_PY_ASSIGNED = re.compile(r"^[+-]?[ \t]*[A-Za-z_]\w*(?:\s*:\s*[\w.]+)?\s*=\s*$")
_C_DECLARED = re.compile(
    r"^[+-]?[ \t]*(?:(?:const|static|volatile|register)\s+)*"
    r"(?!(?:else|return|case|if|do)\b)[A-Za-z_][\w:<>]*\s+\**[A-Za-z_]\w*\s*=\s*$"
)
_PY_STATEMENT_END = re.compile(r"[ \t]*(?:#[^\n]*)?(?:\n|$)")
_C_STATEMENT_END = re.compile(r"\s*;")
_FILLS = frozenset({"full", "full_like", "fill", "fill_"})
# How far before a -inf a call's name or an ``other=`` is looked for: the words right before
# it, so each -inf costs the same whatever the file's length.
_NEAR = 200


def _open_call(text: str, position: int, reach: int = 4000) -> int | None:
    """Where the innermost call still open at ``position`` opens its parenthesis, within
    ``reach`` characters before it; None outside any."""
    depth = 0
    for index in range(position - 1, max(-1, position - reach - 1), -1):
        char = text[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                return index if char == "(" else None
            depth -= 1
    return None


def _line_before(text: str, position: int) -> str:
    """The text of ``position``'s line before it."""
    return text[text.rfind("\n", 0, position) + 1 : position]


def _starts_running_value(source: KernelSource, start: int, end: int) -> bool:
    """Whether the -inf literal at ``start:end`` is the whole initial value of a name (``m =
    -float("inf")``, ``float m = -INFINITY;``) or the fill of a creation assigned to one
    (``b_m = tl.full([BLOCK_M], float("-inf"), tl.float32)``)."""
    text = source.text
    c_like = source.language in _C_LANGUAGES
    declared = _C_DECLARED if c_like else _PY_ASSIGNED
    ending = _C_STATEMENT_END if c_like else _PY_STATEMENT_END
    if declared.match(_line_before(text, start)) and ending.match(text, end):
        return True
    opened = _open_call(text, start)
    if opened is None:
        return False
    name = _CALL_NAME.search(text, max(0, opened - _NEAR), opened)
    return (
        name is not None
        and name.group(1).rsplit(".", 1)[-1] in _FILLS
        and _PY_ASSIGNED.match(_line_before(text, name.start())) is not None
    )


def _pads_a_load(text: str, start: int) -> bool:
    """Whether the -inf literal at ``start`` is the ``other=`` of a load (``tl.load(p,
    mask=m, other=-float("inf"))``): the value of the dead lanes of a row."""
    if not _LOAD_OTHER.search(text, max(0, start - _NEAR), start):
        return False
    opened = _open_call(text, start)
    if opened is None:
        return False
    name = _CALL_NAME.search(text, max(0, opened - _NEAR), opened)
    return name is not None and name.group(1).rsplit(".", 1)[-1] == "load"


def _no_mask_write(source: KernelSource, start: int, end: int) -> bool:
    """Whether the -inf found at ``start:end`` is written by no mask: a load's padding or
    the start of a running max (see the module's docstring)."""
    inside = _INSIDE_FLOAT.search(source.text, max(0, start - 16), start)
    if inside is not None:  # the "-inf" of float("-inf"): judge the whole literal
        start = inside.start()
    literal = _LITERAL.match(source.text, start)
    end = literal.end() if literal is not None else end
    return _pads_a_load(source.text, start) or _starts_running_value(source, start, end)


def precision_suspects(sources: Sequence[KernelSource]) -> list[Suspect]:
    """The seed's four numeric suspects, each marked found or not in ``sources``.

    1. ``tl.dot`` at tf32: an explicit ``input_precision="tf32"``/``allow_tf32=True``, or
       the default precision on float32 operands the text shows (casts, fp32 creations,
       results of another dot). tf32 settings do not change bf16/fp16 dots, so those are
       not suspects;
    2. an LSE whose base does not match its exponent (exp2 with ln, or exp with log2);
    3. softmax masking with -inf and no guard for fully masked rows (-inf - -inf = NaN);
    4. accumulation in bf16/fp16.
    """
    suspects = []
    dot = _dot_suspects(sources)
    if dot is not None:
        source, line, text, why = dot
        # The seed's ladder is tf32x3 → tf32 → ieee; this dot already runs the tf32 rung
        # (the one failing), so what is left to try is tf32x3, then ieee.
        advice = (
            "this tl.dot is set to tf32, which rounds float32 inputs to 10 mantissa bits: "
            "walk the ladder tf32x3 → tf32 → ieee from where it stands (tf32): try "
            "input_precision='tf32x3', then 'ieee'"
            if why == "explicit"
            else "tl.dot runs float32 operands at tf32 by default: walk the ladder "
            "tf32x3 → tf32 → ieee from where it stands (tf32): try input_precision='tf32x3', "
            "then 'ieee'"
        )
        suspects.append(
            Suspect(
                name="dot input precision",
                catalog_id="dot-input-precision",
                found=True,
                path=source.path,
                line=line,
                text=text,
                advice=advice,
            )
        )
    else:
        suspects.append(
            Suspect(name="dot input precision", catalog_id="dot-input-precision", found=False)
        )
    exp2, exp_e = find_pattern(sources, _EXP2), find_pattern(sources, _EXP_E)
    log_e, log_2 = find_pattern(sources, _LOG_E), find_pattern(sources, _LOG_2)
    mismatch = None
    if exp2 is not None and log_e is not None and log_2 is None:
        mismatch = (log_e, "exp2 in the softmax but a natural log in the LSE")
    elif exp_e is not None and exp2 is None and log_2 is not None and log_e is None:
        mismatch = (log_2, "exp in the softmax but log2 in the LSE")
    if mismatch is not None:
        (source, line, text), why = mismatch
        suspects.append(
            Suspect(
                name="LSE base",
                catalog_id="lse-base-mismatch",
                found=True,
                path=source.path,
                line=line,
                text=text,
                advice=f"{why}: convert with ln 2 (lse = m * ln2 + log(l)) or keep one base "
                f"throughout",
            )
        )
    else:
        suspects.append(Suspect(name="LSE base", catalog_id="lse-base-mismatch", found=False))
    # A -inf a mask writes into the values; one that pads a masked load's lanes or starts a
    # running max is no fully masked row.
    neg_inf = find_pattern(sources, _NEG_INF, skip=_no_mask_write)
    if neg_inf is not None and find_pattern(sources, _INF_GUARD) is None:
        source, line, text = neg_inf
        suspects.append(
            Suspect(
                name="softmax masking",
                catalog_id="unguarded-fully-masked-rows",
                found=True,
                path=source.path,
                line=line,
                text=text,
                advice="rows masked entirely give max = -inf and exp(-inf - -inf) = NaN: guard "
                "the running max",
            )
        )
    else:
        suspects.append(
            Suspect(name="softmax masking", catalog_id="unguarded-fully-masked-rows", found=False)
        )
    bf16 = find_pattern(sources, _BF16_ACC)
    if bf16 is not None:
        source, line, text = bf16
        # The match, not its line: a tl.zeros call may put its dtype on a later line.
        match = _BF16_ACC.search(source.text)
        held = match.group(0).lower() if match is not None else text.lower()
        suspects.append(
            Suspect(
                name="bf16 accumulation",
                catalog_id="bf16-accumulation",
                found=True,
                path=source.path,
                line=line,
                text=text,
                advice="accumulate in fp32 and cast once at the store",
                dtype="bf16" if "bfloat16" in held else "fp16",
            )
        )
    else:
        suspects.append(
            Suspect(name="bf16 accumulation", catalog_id="bf16-accumulation", found=False)
        )
    return suspects


_ALIASES = {
    "s_q": (
        "s_q",
        "seqlen_q",
        "seq_len_q",
        "q_len",
        "num_q_tokens",
        "S_Q",
        "SEQ_Q",
        "s_query",
        "max_seqlen_q",
        "q_seq_len",
    ),
    "b": ("b", "batch", "batch_size", "B", "num_seqs"),
    "h_q": ("h_q", "num_heads", "H_Q", "nheads", "num_q_heads"),
    "h_kv": ("h_kv", "num_kv_heads", "H_KV", "nheads_kv"),
}
# Comparison operators, the two-character ones first so that ``>=`` is not read as ``>``.
_ANY_OP = "==|!=|<=|>=|<|>"
_GUARD = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(==|<=|>=|<|>|!=)\s*([-\w.]+)\s*$")


def _spaced(text: str) -> str:
    """A pattern for ``text`` as written, spaces free."""
    return r"\s*".join(re.escape(part) for part in text.split())


def _expression_pattern(guard: str) -> re.Pattern[str] | None:
    """An expression guard (``q.shape[1] == 1``) as the kernel may test it: as written,
    mirrored (``1 == q.shape[1]``) or negated (``!=``; ``> 1`` for ``== 1``), spaces free,
    and not inside a longer expression (``q.shape[1] == 16``, ``kq.shape[1]``)."""
    if not guard.split():
        return None
    sides = [side.strip() for side in guard.split("==")]
    if len(sides) == 2 and all(sides):
        left, right = (_spaced(side) for side in sides)
        number = _NUMBER.fullmatch(sides[1]) is not None
        forward = "==|!=" + ("|<=|>" if number else "")
        mirrored = "==|!=" + ("|>=|<" if number else "")
        body = rf"{left}\s*(?:{forward})\s*{right}|{right}\s*(?:{mirrored})\s*{left}"
    else:
        body = _spaced(guard)
    return re.compile(rf"(?<![\w.])(?:{body})(?![\w.])")


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@functools.lru_cache(maxsize=32)
def _words_only(text: str, language: str) -> tuple[list[int], list[int]]:
    """The comments, docstrings and one-line string literals of a kernel's text, as sorted
    starts and their ends: text where a guard's words stand without testing anything (a
    remark, a message, a format string). A triple-quoted string that is not a docstring is
    code (inline CUDA source)."""
    pattern = _C_PROSE if language in _C_LANGUAGES else _PY_PROSE
    starts: list[int] = []
    ends: list[int] = []
    for match in pattern.finditer(text):
        if match.lastgroup is None and match.group().startswith(('"""', "'''")):
            continue
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def _in_words_only(source: KernelSource, start: int, _end: int) -> bool:
    starts, ends = _words_only(source.text, source.language)
    i = bisect_right(starts, start) - 1
    return i >= 0 and start < ends[i]


def guard_present(
    guard: str, sources: Sequence[KernelSource]
) -> tuple[KernelSource, int, str] | None:
    """Where a kernel's code tests ``guard`` (``"s_q == 1"``), allowing common spellings of
    the axis and the negated test (``if s_q > 1:`` is a special path too); None when absent.
    A guard written in a comment, a docstring or a one-line string tests nothing."""
    match = _GUARD.match(guard)
    if match is None:
        pattern = _expression_pattern(guard)
        if pattern is None:
            return None
        return find_pattern(sources, pattern, skip=_in_words_only)
    name, op, value = match.groups()
    base = name.rsplit(".", 1)[-1]
    spellings = _ALIASES.get(base, (base,))
    if base not in spellings:
        spellings = (base, *spellings)
    names = "|".join(re.escape(s) for s in spellings)
    number = re.escape(value)
    # An equality guard shows as itself, its negation, or the one-sided test that singles
    # the value out (``s_q <= 1``, ``s_q > 1``); ``s_q >= 1`` and ``s_q < 1`` ask whether
    # there is any query at all, which every call answers the same way.
    forward, mirrored = ("==|!=|<=|>", "==|!=|>=|<") if op == "==" else (_ANY_OP, _ANY_OP)
    pattern = re.compile(
        rf"(?:\b(?:{names})\b\s*(?:{forward})\s*{number}\b)"
        rf"|(?:\b{number}\s*(?:{mirrored})\s*\b(?:{names})\b)"
    )
    return find_pattern(sources, pattern, skip=_in_words_only)


def _derived(
    function: ast.AST, seeds: Callable[[ast.AST], bool], *, stop: set[str] | None = None
) -> set[str]:
    """The names ``function`` assigns from an expression that ``seeds`` accepts somewhere
    in it, or that uses a name already derived (to a fixed point): what flows from a
    ``tl.program_id`` or a ``tl.load``; an expression using a name of ``stop`` passes
    nothing on (a tile's place mixed with a loaded length is no longer the tile's)."""
    assignments: list[tuple[set[str], ast.expr]] = []
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            assignments.append((names, node.value))
    derived: set[str] = set()
    changed = True
    while changed:
        changed = False
        for names, value in assignments:
            if names <= derived or (stop and _uses(value, stop)):
                continue
            if any(
                seeds(inner) or (isinstance(inner, ast.Name) and inner.id in derived)
                for inner in ast.walk(value)
            ):
                derived |= names
                changed = True
    return derived


def _is_call_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _call_name(node) == name


def _uses(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(inner, ast.Name) and inner.id in names for inner in ast.walk(node))


def _python_functions(
    sources: Iterable[KernelSource], *, device: bool
) -> Iterator[tuple[KernelSource, list[str], ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Each function of the Python sources that parse, with its source's lines: the
    device functions (``@triton.jit`` and the like) for ``device=True``, the host ones
    otherwise."""
    for source in sources:
        module = parse_python(source.text) if source.language == "python" else None
        if module is None:
            continue
        lines = source.text.split("\n")
        for function in ast.walk(module):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                _is_device(function) == device
            ):
                yield source, lines, function


def _program_and_lengths(function: ast.AST) -> tuple[set[str], set[str]]:
    """The names ``function`` derives from ``tl.program_id``, and those it derives from a
    ``tl.load`` at the program's own place (a length loaded for its own sequence)."""
    program = _derived(function, lambda n: _is_call_of(n, "program_id"))
    return program, _derived(function, lambda n: _per_program_load(n, program))


def _per_program_load(node: ast.AST, program: set[str]) -> bool:
    """Whether ``node`` loads at the program's own place (a name of ``program``, or
    ``tl.program_id`` itself, in its address)."""
    return _is_call_of(node, "load") and bool(
        _uses(node, program) or any(_is_call_of(inner, "program_id") for inner in ast.walk(node))
    )


def length_bounded_loop(sources: Iterable[KernelSource]) -> tuple[KernelSource, int, str] | None:
    """Where a kernel bounds a loop by a length it loads for its own program: ``lk =
    tl.load(LK + b)`` with ``b`` from ``tl.program_id``, then ``for start in range(0, hi,
    BLOCK)`` with ``hi`` from ``lk`` (or ``end - start`` of ``cu_seqlens``). Such a loop
    stops at each sequence's real length: padding past it costs no iteration.

    Returns
    -------
    (KernelSource, int, str) or None
        The source, the 1-based line and text of the first such loop, or None where no
        Python kernel of ``sources`` has one.
    """
    for source, lines, function in _python_functions(sources, device=True):
        program, lengths = _program_and_lengths(function)
        for loop in ast.walk(function):
            bound: ast.AST | None = None
            if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call):
                bound = loop.iter if _call_name(loop.iter) in _RANGES else None
            elif isinstance(loop, ast.While):
                bound = loop.test
            if bound is not None and (
                _uses(bound, lengths)
                or any(_per_program_load(inner, program) for inner in ast.walk(bound))
            ):
                line = getattr(loop, "lineno", 0)
                return source, line, lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return None


def early_exit(sources: Iterable[KernelSource]) -> tuple[KernelSource, int, str] | None:
    """Where a kernel's program returns at once when its tile starts past a length it
    loads for its own program: ``if mblk * BLOCK_M >= q_len: return`` with ``mblk`` from
    ``tl.program_id`` and ``q_len`` from a ``tl.load`` at the program's sequence. Such a
    program does no work on the padding of the axis the grid spans.

    Returns
    -------
    (KernelSource, int, str) or None
        The source, the 1-based line of the ``if`` and the test with its return, or None
        where no Python kernel of ``sources`` has one.
    """
    for source, _lines, function in _python_functions(sources, device=True):
        _program, lengths = _program_and_lengths(function)
        # The tile's place: from the program id, not from a loaded length.
        tiles = _derived(function, lambda n: _is_call_of(n, "program_id"), stop=lengths)
        for node in ast.walk(function):
            if not (
                isinstance(node, ast.If)
                and isinstance(node.test, ast.Compare)
                and len(node.test.comparators) == 1
                and isinstance(node.body[0], ast.Return)
            ):
                continue
            sides = (node.test.left, node.test.comparators[0])
            names = [{n.id for n in ast.walk(side) if isinstance(n, ast.Name)} for side in sides]
            if any(
                mine & tiles and not mine & lengths and theirs & lengths
                for mine, theirs in (names, names[::-1])
            ):
                return source, node.lineno, f"if {ast.unparse(node.test)}: return"
    return None


def _shape_names(function: ast.AST) -> dict[str, str]:
    """The names ``function`` binds to a tensor's size: ``{"H": "q.shape[1]"}`` for ``B,
    H, S, D = q.shape`` or ``H = q.shape[1]`` (``q.size(1)`` alike)."""
    names: dict[str, str] = {}
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Attribute)
            and value.attr == "shape"
            and isinstance(value.value, ast.Name)
        ):
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    names[element.id] = f"{value.value.id}.shape[{index}]"
        elif isinstance(target, ast.Name):
            size = _size_ref(value)
            if size is not None:
                names[target.id] = size
    return names


def _size_ref(node: ast.AST) -> str | None:
    """``"q.shape[1]"`` for ``q.shape[1]`` or ``q.size(1)``, else None."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.value.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, int)
    ):
        return f"{node.value.value.id}.shape[{node.slice.value}]"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and isinstance(node.func.value, ast.Name)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, int)
    ):
        return f"{node.func.value.id}.shape[{node.args[0].value}]"
    return None


def grid_sizes(sources: Iterable[KernelSource]) -> dict[str, tuple[KernelSource, int, str]]:
    """The tensor sizes a launch grid spans, each with where the grid is: ``{"q.shape[1]":
    (source, 70, "grid = (triton.cdiv(Sq, BLOCK_M), B * H)")}`` where the launcher reads
    ``B, H, Sq, D = q.shape`` and launches ``kernel[grid](...)``.

    A size the grid spans sets how many programs run: at 1 it launches fewer of them,
    not a loop with one trip. Only Python launchers (``kernel[grid](...)``) are read.
    """
    found: dict[str, tuple[KernelSource, int, str]] = {}
    for source, lines, function in _python_functions(sources, device=False):
        sizes = _shape_names(function)
        grids = {
            t.id: node
            for node in ast.walk(function)
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for launch in ast.walk(function):
            if not (isinstance(launch, ast.Call) and isinstance(launch.func, ast.Subscript)):
                continue
            grid: ast.AST = launch.func.slice
            at: ast.AST = launch
            if isinstance(grid, ast.Name) and grid.id in grids:
                at = grids[grid.id]
                grid = grids[grid.id].value
            line = getattr(at, "lineno", 0)
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            for inner in ast.walk(grid):
                size = _size_ref(inner)
                if size is None and isinstance(inner, ast.Name):
                    size = sizes.get(inner.id)
                if size is not None:
                    found.setdefault(size, (source, line, text))
    return found
