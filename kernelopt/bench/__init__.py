"""Time kernels, measure device ceilings and place results on the roofline.

Every decision in an optimization loop rests on a timing. This package makes timings
that can be trusted and carries them, typed, to the rest of kernelopt:

- :func:`measure` / :class:`Timer` (``bench/timer.py``): CUDA events per call, a warm-up
  that waits for the steady (power-capped) state, cold L2 (flush or rotating inputs
  proven to wrap) or hot, CUDA-graph mode, noise-based stopping, NVML clocks, power and
  throttle flags, NVTX ranges; a host-clock fallback without CUDA.
- :mod:`~kernelopt.bench.guards`: poisoned outputs, cached-result and stream checks.
- :func:`check_close`, :func:`check_equal` (``bench/verify.py``): an output against its
  reference, by the float64 relative error or exactly (integer outputs).
- :class:`Roofline`, :func:`measure_ceilings` (``bench/roofline.py``): FLOPs and bytes
  against measured, cached ceilings; the metrics catalog triggers read. Costs of common
  calls: :func:`matmul_cost`, :func:`attention_cost` (fused attention forward,
  ``bench/attention.py``), :func:`mla_decode_cost`.
- :func:`compare` (``bench/compare.py``): paired, interleaved A/B runs and a verdict that
  never calls noise a win.
- :mod:`~kernelopt.bench.records`: JSONL rows and the canonical experiment result.
- :func:`run_trials` (``bench/trials.py``), :func:`tune` (``bench/tuning.py``) and
  :class:`ProfileReport` (``bench/report.py``).

Importing this package imports neither torch, triton nor numpy; they load when a
measurement needs them.
"""

from kernelopt.bench.attention import attention_cost, attention_pairs
from kernelopt.bench.compare import Comparison, Verdict, compare, judge
from kernelopt.bench.device import DeviceState, clock_changes, read_device_state
from kernelopt.bench.guards import (
    check_responds_to_inputs,
    check_timed_stream,
    check_written,
    poison,
    unwritten_count,
    unwritten_where,
)
from kernelopt.bench.measurement import Measurement
from kernelopt.bench.mla import MLATrial, mla_decode_cost, mla_trial_matrix
from kernelopt.bench.records import (
    BenchRow,
    KeptSlowerWarning,
    append_rows,
    environment,
    read_rows,
    row_from_measurement,
    to_result_row,
    write_experiment,
)
from kernelopt.bench.report import (
    BaselineMetric,
    Bottleneck,
    Opportunity,
    ProfileReport,
    Stage,
    profile_report,
)
from kernelopt.bench.roofline import (
    Ceilings,
    Cost,
    MatmulPrecisionWarning,
    Roofline,
    RooflineLayout,
    RooflinePoint,
    copy_cost,
    elementwise_cost,
    launch_overhead_pct,
    load_ceilings,
    matmul_cost,
    measure_ceilings,
    plot_roofline,
    roofline_layout,
    save_ceilings,
)
from kernelopt.bench.timer import Timer, evicting_bytes, measure
from kernelopt.bench.trials import (
    DEFAULT_POINTS,
    TrialCall,
    TrialPoint,
    TrialResult,
    TrialsInterrupted,
    run_trials,
    trial_matrix,
)
from kernelopt.bench.tuning import (
    AutotuneExplosionWarning,
    TuningInterrupted,
    TuningResult,
    TuningTrial,
    UnsureGainWarning,
    tune,
)
from kernelopt.bench.verify import check_close, check_equal

__all__ = [
    "DEFAULT_POINTS",
    "AutotuneExplosionWarning",
    "BaselineMetric",
    "BenchRow",
    "Bottleneck",
    "Ceilings",
    "Comparison",
    "Cost",
    "DeviceState",
    "KeptSlowerWarning",
    "MLATrial",
    "MatmulPrecisionWarning",
    "Measurement",
    "Opportunity",
    "ProfileReport",
    "Roofline",
    "RooflineLayout",
    "RooflinePoint",
    "Stage",
    "Timer",
    "TrialCall",
    "TrialPoint",
    "TrialResult",
    "TrialsInterrupted",
    "TuningInterrupted",
    "TuningResult",
    "TuningTrial",
    "UnsureGainWarning",
    "Verdict",
    "append_rows",
    "attention_cost",
    "attention_pairs",
    "check_close",
    "check_equal",
    "check_responds_to_inputs",
    "check_timed_stream",
    "check_written",
    "clock_changes",
    "compare",
    "copy_cost",
    "elementwise_cost",
    "environment",
    "evicting_bytes",
    "judge",
    "launch_overhead_pct",
    "load_ceilings",
    "matmul_cost",
    "measure",
    "measure_ceilings",
    "mla_decode_cost",
    "mla_trial_matrix",
    "plot_roofline",
    "poison",
    "profile_report",
    "read_device_state",
    "read_rows",
    "roofline_layout",
    "row_from_measurement",
    "run_trials",
    "save_ceilings",
    "to_result_row",
    "trial_matrix",
    "tune",
    "unwritten_count",
    "unwritten_where",
    "write_experiment",
]
