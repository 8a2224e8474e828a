"""Every ``kernelopt`` help page shows examples, and each example runs as shown.

The parser tree is walked, so a subcommand added later is held to the same rule. A page's
examples run in order, in a fresh folder of their own that sees the checkout's
``examples/``, ``docs/`` and sample traces (copies: an example writing there would not
write in the repository). An example that writes (``catalog new``) writes in that folder,
and the next example of its page reads what it wrote; a page whose examples need the
user's own tree (``catalog index``) finds one there, started as its heading says.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from kernelopt import cli
from kernelopt.bench.timer import cuda_available
from tests.conftest import cli_parsers

REPO = Path(__file__).resolve().parents[1]
# What "run in a kernelopt checkout" reads: the example logs, the docs, the sample traces.
CHECKOUT_PARTS = ("examples", "docs", "tests/workload/data")
# How an example line starts: the installed script.
_PREFIXES = ("kernelopt ",)


PARSERS = cli_parsers()


def _examples_section(prog: str) -> str:
    """The text of ``prog``'s help from its ``Examples`` heading on; empty without one."""
    _, heading, after = PARSERS[prog].format_help().partition("\nExamples")
    return heading + after


def _examples(prog: str) -> list[str]:
    """The example command lines of ``prog``'s help: the indented lines after ``Examples``."""
    lines = [line.strip() for line in _examples_section(prog).splitlines() if line.startswith("  ")]
    return [line for line in lines if line.startswith(_PREFIXES)]


def _needs_a_tree(prog: str) -> bool:
    """Whether ``prog``'s examples run in a folder holding the user's own tree."""
    heading = " ".join(_examples_section(prog).partition(":")[0].split())
    return "holding your knowledge tree my-knowledge/ (`catalog new` starts one)" in heading


def _argv(example: str) -> list[str]:
    """The arguments after the program of an example line."""
    words = shlex.split(example)
    return words[3:] if words[:3] == ["python", "-m", "kernelopt"] else words[1:]


def _page_of(argv: list[str]) -> str:
    """The prog of the help page of the (sub)command ``argv`` runs."""
    words = ["kernelopt"]
    for word in argv:
        if " ".join([*words, word]) not in PARSERS:
            break
        words.append(word)
    return " ".join(words)


def _codes_stated(prog: str) -> set[int]:
    """0, and 1 where the page's exit codes give 1 a meaning."""
    text = " ".join((PARSERS[prog].epilog or "").split())
    return {0, 1} if re.search(r"Exit codes: 0 [^;]*; 1 ", text) else {0}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the parts of the checkout the examples read."""
    root = tmp_path_factory.mktemp("checkout")
    for part in CHECKOUT_PARTS:
        shutil.copytree(REPO / part, root / part)
    return root


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_help_shows_examples(prog: str) -> None:
    help_text = PARSERS[prog].format_help()
    assert "\nExamples" in help_text, f"{prog}: no Examples section"
    assert _examples(prog), f"{prog}: an Examples section without a command line"


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_help_example_runs_with_a_stated_exit_code(
    prog: str,
    checkout: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for part in CHECKOUT_PARTS:
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / part).symlink_to(checkout / part, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    if _needs_a_tree(prog):
        assert cli.main(_argv(_examples("kernelopt catalog new")[0])) == 0
    for example in _examples(prog):
        argv = _argv(example)
        page = _page_of(argv)
        if argv[0] == "bench" and cuda_available():  # minutes of GPU time: checked to parse
            assert callable(cli.build_parser().parse_args(argv).handler), example
            continue
        code = cli.main(argv)
        out, err = capsys.readouterr()
        assert "Traceback" not in err, f"{prog}: {example}\n{err}"
        if argv[0] == "bench":
            # Without a GPU the page states exit 2, "no CUDA device", said before any write.
            assert code == 2 and "CUDA" in err, f"{prog}: {example} exit {code}\n{err}"
            assert not any(tmp_path.glob("*.jsonl")), f"{prog}: {example} wrote rows"
            continue
        assert code in _codes_stated(page), f"{prog}: {example} exit {code}\n{err}"
        assert out or err, f"{prog}: {example} said nothing"


def test_the_examples_that_write_write_in_the_folder_they_run_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for example in [_examples("kernelopt catalog new")[0], *_examples("kernelopt catalog index")]:
        assert cli.main(_argv(example)) == 0, (example, capsys.readouterr().err)
    tree = tmp_path / "my-knowledge"
    assert (tree / "languages" / "triton" / "optimizations" / "stream-k-split-decode.md").is_file()
    # The scaffold still holds its <FILL: ...> placeholders: the index lists no entry yet.
    assert (tree / "index.md").read_text(encoding="utf-8").startswith("# Knowledge index")
    assert not (REPO / "my-knowledge").exists()
