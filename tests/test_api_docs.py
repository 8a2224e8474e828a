"""The public API's docstrings: present, numpydoc sections that match the signatures.

Every name a subpackage exports through ``__all__`` (and every public method or property
of an exported class) has a docstring. A ``Parameters`` section names exactly the
parameters the function takes, no more, no fewer; module-level functions, and public
methods, classmethods and staticmethods of exported classes, of two or more parameters
(besides ``self`` or ``cls``) have one, and a tensor parameter's entry states its shape.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

SUBPACKAGES = (
    "kernelopt.catalog",
    "kernelopt.diagnose",
    "kernelopt.workload",
    "kernelopt.bench",
    "kernelopt.buffers",
    "kernelopt.workflow",
    "kernelopt.kernels.mla",
    "kernelopt.experiments",
)

# Thin wrappers whose parameters are documented where they are forwarded, each
# parameter exactly once (checked below): repeating 23 timer options would let the two
# lists drift apart.
DELEGATES = {
    "kernelopt.bench.measure": ("kernelopt.bench.Timer", "kernelopt.bench.Timer.measure"),
    "kernelopt.workload.profile_trace": (
        "kernelopt.workload.read_trace",
        "kernelopt.workload.profile_calls",
    ),
}

SECTION = re.compile(r"^([A-Z][a-z]+(?: [A-Za-z]+)?)\n-{3,}$", re.M)


def sections(doc: str) -> dict[str, str]:
    """The numpydoc sections of a cleaned docstring, by title."""
    found = list(SECTION.finditer(doc))
    return {
        m.group(1): doc[m.end() : found[i + 1].start() if i + 1 < len(found) else len(doc)]
        for i, m in enumerate(found)
    }


def entries(block: str) -> dict[str, str]:
    """A Parameters section's entries: each documented name → its whole entry text."""
    out: dict[str, str] = {}
    current = ""
    for line in block.strip("\n").splitlines():
        if line and not line[0].isspace():
            current = line
            for name in line.split(" : ")[0].split(","):
                out[name.strip().lstrip("*")] = line
        elif current:
            for name, text in out.items():
                if text.startswith(current):
                    out[name] = text + "\n" + line
    return out


def documented(*objects: object) -> dict[str, str]:
    found: dict[str, str] = {}
    for obj in objects:
        doc = inspect.getdoc(obj) or ""
        found |= entries(sections(doc).get("Parameters", ""))
    return found


def parameters(fn: Callable[..., Any]) -> list[str]:
    """The parameters a caller passes: a method's ``self`` or ``cls`` is left out."""
    names = list(inspect.signature(fn).parameters)
    if names[:1] in (["self"], ["cls"]) and "." in fn.__qualname__:
        return names[1:]
    return names


def resolve(dotted: str) -> Any:
    for i in range(dotted.count("."), 0, -1):
        parts = dotted.split(".")
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise AssertionError(f"Expected an importable name, got {dotted}")


def exported() -> Iterator[tuple[str, Any]]:
    seen: set[int] = set()
    for package in SUBPACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                yield f"{package}.{name}", obj


def functions() -> Iterator[tuple[str, Callable[..., Any], object]]:
    """Every public function and method: (qualified name, function, where its docs live)."""
    for qualname, obj in exported():
        if inspect.isfunction(obj):
            yield qualname, obj, obj
            continue
        for name, member in vars(obj).items():
            fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
            if name == "__init__" and inspect.isfunction(fn) and not attrs.has(obj):
                yield f"{qualname}.__init__", fn, obj
            elif not name.startswith("_") and inspect.isfunction(fn):
                yield f"{qualname}.{name}", fn, fn


def test_every_exported_object_and_its_public_members_have_a_docstring() -> None:
    missing = []
    for qualname, obj in exported():
        if not (obj.__doc__ or "").strip():
            missing.append(qualname)
        if not inspect.isclass(obj):
            continue
        for name, member in vars(obj).items():
            if name.startswith("_"):
                continue
            target = member.fget if isinstance(member, property) else member
            if isinstance(target, (classmethod, staticmethod)):
                target = target.__func__
            if inspect.isfunction(target) and not (target.__doc__ or "").strip():
                missing.append(f"{qualname}.{name}")
    assert missing == []


def test_parameters_sections_name_exactly_the_parameters() -> None:
    wrong = []
    for qualname, fn, holder in functions():
        holders = (holder, fn) if holder is not fn else (fn,)
        if not any("Parameters" in sections(inspect.getdoc(h) or "") for h in holders):
            continue
        names = documented(*holders)
        have = parameters(fn)
        extra = sorted(set(names) - set(have))
        missing = [name for name in have if name not in names]
        if extra or missing:
            wrong.append(f"{qualname}: documents {extra} it lacks, lacks {missing}")
    assert wrong == []


def test_module_functions_of_several_parameters_have_a_parameters_section() -> None:
    lacking = [
        qualname
        for qualname, fn in exported()
        if inspect.isfunction(fn)
        and qualname not in DELEGATES
        and len(parameters(fn)) >= 2
        and "Parameters" not in sections(inspect.getdoc(fn) or "")
    ]
    assert lacking == []


def test_methods_of_several_parameters_have_a_parameters_section() -> None:
    # A constructor's parameters may be documented on the class; a method's on itself. A
    # protocol's __init__ is typing's placeholder, not a constructor anyone calls.
    exports = dict(exported())
    methods = [
        (qualname, fn, holder)
        for qualname, fn, holder in functions()
        if qualname not in exports
        and qualname not in DELEGATES
        and fn.__module__.startswith("kernelopt.")
        and len(parameters(fn)) >= 2
    ]
    # A refactor that hid the methods from this check would make it pass vacuously.
    assert len(methods) > 30
    assert "kernelopt.catalog.KnowledgeTree.refine_applicability" in [q for q, _, _ in methods]
    lacking = [
        qualname
        for qualname, fn, holder in methods
        if not any("Parameters" in sections(inspect.getdoc(h) or "") for h in {holder, fn})
    ]
    assert lacking == []


@pytest.mark.parametrize("wrapper", sorted(DELEGATES))
def test_a_delegating_wrapper_documents_every_parameter_where_it_forwards_it(
    wrapper: str,
) -> None:
    names = documented(*(resolve(target) for target in DELEGATES[wrapper]))
    assert [name for name in parameters(resolve(wrapper)) if name not in names] == []


def test_tensor_parameters_state_their_shapes() -> None:
    vague = []
    for qualname, fn, holder in functions():
        names = documented(holder, fn)
        for name, p in inspect.signature(fn).parameters.items():
            if "Tensor" not in str(p.annotation):
                continue
            text = names.get(name, "")
            if not any(mark in text for mark in ("[", "shape", "1-D")):
                vague.append(f"{qualname}({name})")
    assert vague == []


def test_the_checks_see_the_whole_api() -> None:
    # A refactor that hid the API from the checks above would make them pass vacuously.
    names = [qualname for qualname, _, _ in functions()]
    assert len(names) > 250
    assert "kernelopt.kernels.mla.mla_decode_split_kv" in names
    assert "kernelopt.catalog.Catalog.query" in names
    assert "kernelopt.experiments.write_plan" in names
