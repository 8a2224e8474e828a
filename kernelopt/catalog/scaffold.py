"""A new entry file from the template, with ``<FILL: ...>`` where a person must write.

The scaffold has the template's structure, so ``kernelopt catalog lint`` points at each
placeholder left (file, line, section) instead of failing on the first; once every
placeholder is replaced (the optional Metric and Shape lines may be deleted instead), the
file passes lint.
"""

from __future__ import annotations

import os
from pathlib import Path

from kernelopt._errors import CatalogError, InputError, expected
from kernelopt._fileio import atomic_write_text, locked
from kernelopt.catalog._fields import as_path, enum_field, require_bool, require_str, to_enum
from kernelopt.catalog.layout import candidate_paths, check_tree_folder, entry_path, make_root
from kernelopt.catalog.markdown import EVIDENCE_HEADER, NO_INTERACTIONS
from kernelopt.catalog.model import Kind, relative_path, slugify
from kernelopt.catalog.vocabulary import FAMILIES, entry_language

__all__ = ["new_entry_file", "scaffold_entry"]

# Placeholders hold no '<' or '>' inside: lint shows each up to its closing '>'.
_KEYWORDS = (
    "<FILL: lower-case phrases experiment logs use for it, comma-separated, "
    "e.g. split-kv, split kv, num_splits>"
)
_METRIC = (
    "- Metric: `<FILL: a metric condition: name, operator, number or metric, e.g. dram_pct "
    "greater than 60; or delete this line>` — <FILL: what the condition shows>"
)
_SHAPE = (
    "- Shape: `<FILL: a shape condition, e.g. s_q equal to 1; or delete this line>` "
    "— <FILL: why the shape matters>"
)
_ROW = (
    "| <FILL: config, e.g. b=32 s=1 t=4096> | <FILL: before, with unit> "
    "| <FILL: after, with unit> | <FILL: change, e.g. -12 %> |"
)


def scaffold_entry(name: str, *, kind: Kind | str, language: str | None = None) -> tuple[str, str]:
    """The scaffold of a new entry.

    Parameters
    ----------
    name : str
        Display name (``"Warp Specialization"``); the id is its kebab-case form.
    kind : Kind or str
        ``"optimization"`` or ``"anti-pattern"``, in any case (``"Anti-Pattern"``).
    language : str, optional
        A language for a language-specific entry; shared when None.

    Returns
    -------
    (str, str)
        The tree-relative path and the file text.
    """
    entry_kind = enum_field(Kind, "kind")(kind)
    scope = "shared" if language is None else entry_language(language)
    require_str(name, "name", "a one-line name (str)")
    entry_id = slugify(name)
    if not entry_id or "\n" in name or "\r" in name:
        raise InputError(
            expected("a one-line name with letters or digits", repr(name), where="name")
        )
    what = "how and why it works" if entry_kind is Kind.OPTIMIZATION else "how it fails and why"
    text = f"""# {name.strip()}

- id: {entry_id}
- kind: {entry_kind.value}
- scope: {scope}
- families: <FILL: kernel families it applies to, comma-separated, from: {", ".join(FAMILIES)}>
- fundamental_for: none
- keywords: {_KEYWORDS}

## When to Apply
- <FILL: the context, e.g. decode attention over long KV caches, or any online-softmax kernel>
{_METRIC}
{_SHAPE}

## Mechanism
<FILL: {what}>

## Affected Metrics
- <FILL: a metric it moves, e.g. DRAM throughput, occupancy, registers per thread>

## Implementation
```python
# <FILL: a short code snippet of the change>
```

## Performance Evidence
Source type: <FILL: local experiment or external report>
Source: <FILL: where the numbers come from: experiments/exp_N/result.md, a URL, or owner/repo path>

{EVIDENCE_HEADER}
{_ROW}

## Generalization
<FILL: the device-agnostic takeaway, separate from the local evidence>

## Pitfalls
- <FILL: a known failure mode>

## Interactions
{NO_INTERACTIONS}
"""
    return relative_path(entry_id, entry_kind, scope), text


def new_entry_file(
    root: str | os.PathLike[str],
    name: str,
    *,
    kind: Kind | str,
    language: str | None = None,
    with_builtin: bool = True,
) -> Path:
    """Write the scaffold of a new entry into the tree at ``root``; returns its path.

    Parameters
    ----------
    root : path-like
        The knowledge tree (``docs/knowledge/``); created when missing.
    name : str
        Display name (``"Warp Specialization"``); the id is its kebab-case form.
    kind : Kind or str
        ``"optimization"`` or ``"anti-pattern"``, in any case (``"Anti-Pattern"``).
    language : str, optional
        A language for a language-specific entry; shared when None.
    with_builtin : bool
        Also refuse an id that a built-in entry has (a placeholder would shadow it).

    Returns
    -------
    pathlib.Path
        The new file, holding ``<FILL: ...>`` placeholders to replace.

    Raises
    ------
    CatalogError
        If the id is already used in the tree (under either kind and any scope) or, with
        ``with_builtin``, by a built-in entry, ``root`` is a file or cannot be created, or
        it is a folder the tree's other writers refuse: its ``index.md`` was not written by
        ``kernelopt catalog index``, or it has none and holds markdown outside the entry
        folders. Nothing is written then.
    InputError
        If ``name`` is not a one-line name, ``kind`` or ``language`` is unknown, ``root``
        is not a path or ``with_builtin`` is not a bool; nothing is written then.
    """
    rel, text = scaffold_entry(name, kind=kind, language=language)
    # Read as scaffold_entry read it: a kind in any case ("Anti-Pattern"), as the command
    # line's --kind, not only the stored lower-case value.
    entry_kind = to_enum(Kind, kind, "kind")
    scope = "shared" if language is None else entry_language(language)
    base = as_path(root, "root")
    require_bool(with_builtin, "with_builtin")
    entry_id = Path(rel).stem
    if with_builtin:
        from kernelopt.catalog.catalog import Catalog

        if entry_id in Catalog.builtin():
            # A placeholder under a built-in id would shadow the built-in entry.
            raise CatalogError(
                expected(
                    "a new entry id",
                    f"'{entry_id}', a built-in entry (change it with refine_applicability, "
                    "record_evidence or flip)",
                )
            )
    # As every update of the tree: a folder the next `catalog index` would refuse (a docs
    # page at its index.md, or other markdown beside the entry folders) gets no entry.
    check_tree_folder(base)
    make_root(base)
    with locked(base):
        for other in candidate_paths(base, entry_id):
            if other.exists():
                raise CatalogError(expected("a new entry id", f"'{entry_id}', already in {other}"))
        path = entry_path(base, entry_id, entry_kind, scope)
        atomic_write_text(path, text)
    return path
