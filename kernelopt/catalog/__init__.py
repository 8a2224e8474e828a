"""Read, query, lint and update the optimization / anti-pattern catalog.

The catalog is a tree of markdown files, one per entry, in the knowledge-base template
(When to Apply, Mechanism, Affected Metrics, Implementation, Performance Evidence,
Generalization, Pitfalls, Interactions) with a small metadata block under the title that
code evaluates: id, kind, scope, kernel families, the families it is fundamental for, and
keywords; metric triggers and shape conditions are When-to-Apply bullets. kernelopt ships
a built-in tree; a user's ``docs/knowledge/`` tree is merged over it.

Examples
--------
>>> from kernelopt.catalog import Catalog
>>> catalog = Catalog.builtin()
>>> catalog.get("split-kv-flash-decoding").kind.value
'optimization'
>>> [m.id for m in catalog.query(family="mla-decode", metrics={"kv_splits": 32})][:1]
['too-many-kv-splits']
"""

from kernelopt.catalog.catalog import BUILTIN_ROOT, Catalog
from kernelopt.catalog.conditions import Comparison, Condition, Op, parse_condition
from kernelopt.catalog.index import render_index
from kernelopt.catalog.jsonio import entry_from_dict, entry_from_json, entry_to_dict, entry_to_json
from kernelopt.catalog.lint import lint_tree
from kernelopt.catalog.loader import LoadedTree, load_tree
from kernelopt.catalog.markdown import (
    SECTIONS,
    parse_entry,
    parse_entry_with_warnings,
    render_entry,
)
from kernelopt.catalog.model import (
    Entry,
    Evidence,
    EvidenceRow,
    Interaction,
    Kind,
    Relation,
    SourceType,
    slugify,
)
from kernelopt.catalog.problems import Problem, Severity
from kernelopt.catalog.query import (
    Match,
    metrics_missing,
    metrics_read,
    normalize_text,
    shape_facts_missing,
    shape_facts_read,
)
from kernelopt.catalog.scaffold import new_entry_file, scaffold_entry
from kernelopt.catalog.store import KnowledgeTree
from kernelopt.catalog.vocabulary import (
    AXIS_FACTS,
    FAMILIES,
    FAMILY_ALIASES,
    LANGUAGE_ALIASES,
    LANGUAGES,
    METRICS,
    SCOPES,
    SHAPE_FACTS,
    canonical_language,
    family_ancestors,
    shape_fact_for_axis,
)

__all__ = [
    "AXIS_FACTS",
    "BUILTIN_ROOT",
    "FAMILIES",
    "FAMILY_ALIASES",
    "LANGUAGES",
    "LANGUAGE_ALIASES",
    "METRICS",
    "SCOPES",
    "SECTIONS",
    "SHAPE_FACTS",
    "Catalog",
    "Comparison",
    "Condition",
    "Entry",
    "Evidence",
    "EvidenceRow",
    "Interaction",
    "Kind",
    "KnowledgeTree",
    "LoadedTree",
    "Match",
    "Op",
    "Problem",
    "Relation",
    "Severity",
    "SourceType",
    "canonical_language",
    "entry_from_dict",
    "entry_from_json",
    "entry_to_dict",
    "entry_to_json",
    "family_ancestors",
    "lint_tree",
    "load_tree",
    "metrics_missing",
    "metrics_read",
    "new_entry_file",
    "normalize_text",
    "parse_condition",
    "parse_entry",
    "parse_entry_with_warnings",
    "render_entry",
    "render_index",
    "scaffold_entry",
    "shape_fact_for_axis",
    "shape_facts_missing",
    "shape_facts_read",
    "slugify",
]
