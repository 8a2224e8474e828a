"""Unified diffs read as text: files and hunks, replaying them on a base, malformed input."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelopt._errors import FormatError
from kernelopt.experiments.diffs import apply_diff, blob_id, parse_diff

BASE = "".join(f"line {n}\n" for n in range(1, 21))

GIT_DIFF = """\
diff --git a/kernels/k.py b/kernels/k.py
index 1e7856d..4a788cf 100644
--- a/kernels/k.py
+++ b/kernels/k.py
@@ -2,3 +2,4 @@
 line 2
-line 3
+line three
+line 3.5
 line 4
@@ -15,3 +16,2 @@
 line 15
-line 16
 line 17
diff --git a/kernels/helper.py b/kernels/helper.py
new file mode 100644
index 0000000..b05f1a6
--- /dev/null
+++ b/kernels/helper.py
@@ -0,0 +1,2 @@
+def helper():
+    return 1
"""


def test_git_diff_files_hunks_and_paths() -> None:
    first, created = parse_diff(GIT_DIFF)
    assert (first.old_path, first.new_path, first.line) == ("kernels/k.py", "kernels/k.py", 1)
    assert (first.old_id, first.new_id) == ("1e7856d", "4a788cf")
    assert [h.line for h in first.hunks] == [5, 11]
    assert first.added == ("line three", "line 3.5") and first.removed == ("line 3", "line 16")
    assert first.hunks[0].old == ("line 2", "line 3", "line 4")
    assert (created.old_path, created.path, created.line) == (None, "kernels/helper.py", 15)


def test_replaying_a_diff_on_its_base() -> None:
    first, created = parse_diff(GIT_DIFF)
    after = apply_diff(BASE, first)
    assert after is not None
    assert after.splitlines()[1:5] == ["line 2", "line three", "line 3.5", "line 4"]
    assert "line 16" not in after and after.count("\n") == 20
    assert apply_diff("", created) == "def helper():\n    return 1\n"


def test_a_moved_block_fits_nearby_unless_exact() -> None:
    (first, _) = parse_diff(GIT_DIFF)
    shifted = "header\n" * 3 + BASE
    assert apply_diff(shifted, first) is not None
    assert apply_diff(shifted, first, exact=True) is None


def test_a_base_the_diff_was_not_made_against_does_not_fit() -> None:
    (first, _) = parse_diff(GIT_DIFF)
    assert apply_diff(BASE.replace("line 16", "line sixteen"), first) is None
    assert apply_diff("", first) is None


def test_plain_diff_u_and_a_format_patch_message() -> None:
    text = (
        "From 1234 Mon Sep 17 00:00:00 2001\n"
        "Subject: [PATCH] tile rows\n"
        "---\n"
        " k.cu | 2 +-\n\n"
        "--- k.cu.orig\t2026-12-03 10:00:00\n"
        "+++ k.cu\t2026-12-03 10:01:00\n"
        "@@ -1 +1 @@\n"
        "-int a;\n"
        "+constexpr int a = 1;\n"
        "\\ No newline at end of file\n"
        "-- \n2.43.0\n"
    )
    (file,) = parse_diff(text)
    assert (file.old_path, file.new_path) == ("k.cu.orig", "k.cu")
    assert apply_diff("int a;", file) == "constexpr int a = 1;"


def test_a_blank_context_line_stripped_by_an_editor_still_counts() -> None:
    text = "--- a/k.py\n+++ b/k.py\n@@ -1,3 +1,3 @@\n a = 1\n\n-b = 2\n+b = 3\n"
    (file,) = parse_diff(text)
    assert apply_diff("a = 1\n\nb = 2\n", file) == "a = 1\n\nb = 3\n"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("just prose, no change\n", 1, "at least one '@@' hunk"),
        ("@@ -1 +1 @@\n-a\n+b\n", 1, "file header before the first hunk"),
        ("--- a/k.py\n+++ b/k.py\n@@ -1,3 +1,3 @@\n a\n-b\n", 3, "the end of the diff"),
        ("--- a/k.py\n+++ b/k.py\n@@ -1,2 +1,2 @@\n a\n?b\n+c\n", 5, "starting with"),
        ("--- a/k.py\n+++ b/k.py\n@@ -1,1 +1,1 @@\n-a\n-b\n+c\n", 3, "as the header counts"),
        ("--- a/k.py\n+++ b/k.py\n@@ -x +1 @@\n-a\n", 3, "hunk header"),
    ],
)
def test_malformed_diffs_raise_a_located_format_error(text: str, line: int, words: str) -> None:
    with pytest.raises(FormatError) as raised:
        parse_diff(text, path="exp_3/bad.diff")
    assert raised.value.path == "exp_3/bad.diff" and raised.value.line == line
    assert words in raised.value.message


def test_blob_id_is_gits() -> None:
    # ``printf 'hello\n' | git hash-object --stdin``
    assert blob_id("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


_LINES = st.lists(st.sampled_from(["a", "b", "c", "", "if x:", "    y = 1"]), max_size=25)


@settings(max_examples=200, deadline=None)
@given(_LINES, _LINES, st.integers(min_value=0, max_value=3))
def test_a_diff_replays_its_own_change(before: list[str], after: list[str], context: int) -> None:
    old = "".join(line + "\n" for line in before)
    new = "".join(line + "\n" for line in after)
    text = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "a/k", "b/k", n=context
        )
    )
    if not text:
        return  # no change, no diff
    (file,) = parse_diff(text)
    assert apply_diff(old, file, exact=True) == new


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "--- a/k",
                "+++ b/k",
                "@@ -1 +1 @@",
                "@@ -1,2 +0,0 @@",
                " x",
                "-x",
                "+y",
                "\\ No newline",
                "",
                "junk",
            ]
        ),
        max_size=12,
    )
)
def test_any_text_parses_or_raises_a_format_error(lines: list[str]) -> None:
    try:
        files = parse_diff("\n".join(lines))
    except FormatError:
        return
    assert all(file.hunks for file in files)


@pytest.mark.parametrize("start", ["99999999999999999999", "1000000000"])
def test_a_hunk_placed_far_past_the_base_is_refused_at_once(start: str) -> None:
    # Searched outwards one line at a time, a hunk said to start at line 10**20 kept
    # ``diagnose`` busy for ever; the search only visits lines the base has.
    import subprocess
    import sys

    code = (
        "from kernelopt.experiments.diffs import apply_diff, parse_diff\n"
        f"text = '--- a/k.py\\n+++ b/k.py\\n@@ -{start},2 +{start},2 @@\\n x\\n-y\\n+z\\n'\n"
        "(file,) = parse_diff(text)\n"
        "print(apply_diff('a\\nx\\ny\\nb\\n', file), apply_diff('a\\nb\\n', file))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split("\n")[:-1] == ["a", "x", "z", "b", " None"]
