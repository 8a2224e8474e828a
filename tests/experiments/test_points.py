"""Trial points written the ways logs write them compare on the values they state."""

from __future__ import annotations

import pytest

from kernelopt.experiments.points import point_terms, points_differ, split_terms


@pytest.mark.parametrize(
    "written",
    [
        "b=32 s=1 t=4,096 h=16",  # digits grouped by a comma
        "b=32; s=1; t=4096; h=16",
        "(b=32, s=1, t=4096, h=16)",
        "[b=32 s=1 t=4096 h=16]",
        "b = 32, s = 1, t = 4096, h = 16",
        "b =32 s= 1 t=4096 h=16",
    ],
)
def test_a_point_in_another_spelling_is_the_same_point(written: str) -> None:
    assert point_terms(written) == {"b": "32", "s": "1", "t": "4096", "h": "16"}
    assert not points_differ(written, "b=32 s=1 t=4096 h=16")
    assert points_differ(written, "b=32 s=16 t=4096 h=16")


def test_words_without_a_value_stay_words() -> None:
    assert split_terms("decode b=32") == [("decode", "", ""), ("b", "=", "32")]
    assert point_terms("b=32,s=1") == {"b": "32", "s": "1"}
