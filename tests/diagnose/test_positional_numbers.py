"""The plan writes a measured number with its digits, not in exponent form."""

from __future__ import annotations

from kernelopt._numbers_text import readable
from kernelopt.diagnose.engine import diagnose_log

from .conftest import exp, log_of


def test_times_of_six_and_seven_digits_are_written_whole() -> None:
    # Times of the Triton interpreter on a CPU run to seconds, in microseconds.
    diagnosis = diagnose_log(log_of([exp(1, 1225620.0), exp(2, 231767.0)]))
    plan = diagnosis.render_plan()
    assert "Best so far: 231767 us (exp 2)." in plan
    assert "e+0" not in plan


def test_numbers_beyond_any_measurement_keep_their_exponent() -> None:
    assert readable(1.7e308) == "1.7e+308"
    assert readable(1e-300) == "1e-300"
    assert readable(2.5e-05) == "0.000025"
    assert readable(12345678.0, 6) == "12345678"
