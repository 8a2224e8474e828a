"""Plan once per decode step, run once per layer: the MLA decode entry points.

:class:`MLADecodePlan` reads the cache lengths once (on the host), schedules the split-KV
pieces, uploads the schedule and allocates (or adopts) the float32 workspace. Its
:meth:`~MLADecodePlan.run` then only checks tensor metadata and launches kernels: no host
synchronization and no workspace allocation, so it can be captured in a CUDA graph.

:func:`get_mla_metadata` and :func:`mla_decode_with_kvcache` have FlashMLA's signatures
and return layouts (``lse`` is ``[b, h_q, s_q]``, natural log), so code written against
FlashMLA switches by changing an import. Their metadata tensors are kernelopt's own
schedule, opaque to callers, as FlashMLA's are.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

import numpy as np
import triton

from kernelopt._errors import DeviceError, InputError, expected
from kernelopt.kernels.mla import hopper, seesaw
from kernelopt.kernels.mla._validate import (
    D_V,
    check_cache_seqlens,
    check_device,
    check_flag,
    check_inputs,
    check_interpreter_dtype,
    check_outputs,
    check_page_indices,
    check_positive_int,
    check_runnable_device,
    check_seqlen_values,
    check_softmax_scale,
    check_workspace_disjoint,
    device_origin,
    device_origin_note,
)
from kernelopt.kernels.mla.naive import launch_naive
from kernelopt.kernels.mla.schedule import Schedule, build_schedule, plan_schedule
from kernelopt.kernels.mla.split_kv import (
    SplitKVConfig,
    check_config,
    default_config,
    device_num_sms,
    launch_split_kv,
    schedule_tensors,
    split_workspace,
    tile_in_page,
    workspace_numel,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "STRATEGIES",
    "MLADecodePlan",
    "Strategy",
    "get_mla_metadata",
    "mla_decode_with_kvcache",
    "resolve_partial_dtype",
]

Strategy = Literal["naive", "split_kv", "hopper", "seesaw"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)


_DEFAULT_CONFIGS = {"hopper": hopper.default_config, "seesaw": seesaw.default_config}


def _masks_draft_tokens(causal: bool, s_q: int) -> bool:
    """Whether the kernels need their causal branches: one query token has no draft tokens
    to mask (its key limit is the sequence's length either way)."""
    return causal and s_q > 1


def resolve_partial_dtype(
    requested: object, *, kernel: str, rows: int, dtype: torch.dtype, kv_fp8: bool
) -> torch.dtype:
    """The type a plan keeps its split pieces' partial outputs in.

    Parameters
    ----------
    requested : torch.dtype or None
        The caller's ``partial_dtype``; None picks the default.
    kernel : str
        The kernel the plan launches: ``"split_kv"``, ``"hopper"``, ``"seesaw"`` or
        ``"naive"`` (after the small-row fallback to ``"split_kv"``).
    rows : int
        Query rows a sequence (``s_q · h_q``): at most ``seesaw.RING_ROWS`` run the ring kernel.
    dtype : torch.dtype
        The plan's input and output type.
    kv_fp8 : bool
        Whether the plan reads the FP8 cache.

    Returns
    -------
    torch.dtype
        float32, or ``dtype`` (16-bit) where the kernel stores partials with pointers: the
        split-KV kernel and the ring kernel on a dense cache. The default is ``dtype`` for
        the ring kernel (it halves the bytes the partial stores and the merge move, 1.4 %
        at b=32 s=1 h=16, exp 50) and float32 everywhere else. The 64-row seesaw kernel,
        whose pair merge copies the partial back by float32 TMA, ran 2 % slower with 16-bit
        partials (exp 51) and takes float32 only, as does the FP8 ring kernel.

    Raises
    ------
    InputError
        For any other type.
    """
    import torch

    ring_kernel = kernel == "seesaw" and rows <= seesaw.RING_ROWS and not kv_fp8
    sixteen_bit_ok = dtype in (torch.bfloat16, torch.float16) and (
        ring_kernel or (kernel == "split_kv" and not kv_fp8)
    )
    if requested is None:
        return dtype if ring_kernel and sixteen_bit_ok else torch.float32
    allowed = [torch.float32] + ([dtype] if sixteen_bit_ok else [])
    if requested not in allowed:
        names = " or ".join(str(t) for t in allowed)
        raise InputError(
            expected(
                f"{names} for the partial outputs of this plan (kernel {kernel!r}, "
                f"{rows} query rows, dtype {dtype}{', FP8 cache' if kv_fp8 else ''})",
                repr(requested),
                where="partial_dtype",
            )
        )
    return requested  # type: ignore[return-value]


def _host_seqlens(
    cache_seqlens: torch.Tensor | np.ndarray[Any, Any] | Sequence[int],
) -> list[int]:
    import torch

    if isinstance(cache_seqlens, torch.Tensor):
        if cache_seqlens.dim() != 1:
            raise InputError(
                expected("a 1-D tensor", list(cache_seqlens.shape), where="cache_seqlens")
            )
        if cache_seqlens.is_meta:
            raise InputError(
                expected(
                    "lengths with values (a CPU or CUDA tensor)", "meta", where="cache_seqlens"
                )
            )
        dtype = cache_seqlens.dtype
        if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
            raise InputError(
                expected("an integer tensor", str(cache_seqlens.dtype), where="cache_seqlens")
            )
        values = [int(n) for n in cache_seqlens.tolist()]  # the plan's one host sync
    elif isinstance(cache_seqlens, np.ndarray):
        # A serving stack's host-side batch; an array is no Sequence, but its items are.
        if cache_seqlens.ndim != 1:
            raise InputError(
                expected("a 1-D array", list(cache_seqlens.shape), where="cache_seqlens")
            )
        if cache_seqlens.dtype.kind not in "iu":
            raise InputError(
                expected("an integer array", str(cache_seqlens.dtype), where="cache_seqlens")
            )
        values = [int(n) for n in cache_seqlens.tolist()]
    elif isinstance(cache_seqlens, str | bytes) or not isinstance(cache_seqlens, Sequence):
        raise InputError(
            expected(
                "a [b] tensor, NumPy array or list of ints",
                repr(cache_seqlens),
                where="cache_seqlens",
            )
        )
    else:
        values = list(cache_seqlens)
    for i, n in enumerate(values):
        # 100.9 is not a length, and the kernels read lengths as int32.
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 0 <= n < 2**31:
            raise InputError(
                expected("an int32 cache length", repr(n), where=f"cache_seqlens[{i}]")
            )
    return [int(n) for n in values]


def _check_seesaw_target(device: torch.device, dtype: torch.dtype, origin: str | None) -> None:
    """:func:`seesaw.check_seesaw_target`, whose device refusal names the argument the
    device came from (:func:`device_origin`), as :func:`check_runnable_device` does."""
    try:
        seesaw.check_seesaw_target(device, dtype)
    except DeviceError as refused:
        if origin is None:
            raise
        raise DeviceError(f"{origin}: {refused}{device_origin_note(origin)}") from None


class MLADecodePlan:
    """A decode step's schedule and workspace, reused by every layer's :meth:`run`.

    Parameters
    ----------
    cache_seqlens : torch.Tensor, numpy.ndarray or sequence of int
        ``[b]`` integer cache lengths of this step, each at least ``s_q``. Read once on the host
        (a device tensor costs one synchronization here, none later); the plan keeps its
        own device copy, so later in-place changes to the caller's tensor do not leak in.
    s_q : int
        Draft tokens per sequence (1 for plain decode).
    h_q : int
        Query heads per latent KV head.
    page_size : int
        Rows per page of the KV cache.
    softmax_scale : float
        Scale of ``q · k`` before the softmax (DeepSeek-V3: ``1 / sqrt(192)`` times any
        YaRN factor).
    dtype : torch.dtype, optional
        Query/cache dtype the runs will use (bfloat16, float16; float32 for CPU tests);
        bfloat16 when omitted, which the CPU refuses (pass float16 or float32 there).
    device : torch.device or str, optional
        Device of the runs; defaults to ``cache_seqlens``'s device for a tensor, else CUDA
        when present, else the CPU (Triton interpreter).
    causal : bool
        Draft token ``i`` sees keys ``< seqlen - s_q + i + 1`` (default), or all keys.
    strategy : {"split_kv", "naive", "hopper", "seesaw"}
        Kernel family: split-KV flash-decoding (default), the one-pass naive kernel, the
        Hopper-tuned split-KV kernel (tensor-descriptor tiles; needs a page size that is a
        multiple of its key tile, 64 for 16-bit inputs, and a contiguous cache; shapes with
        fewer than 33 query rows per sequence run the split-KV kernel), or the seesaw
        kernel (Gluon, warp-specialized; a Hopper GPU, bfloat16 or float16, pages of a
        multiple of 64 rows, a contiguous cache; the fastest on the H200; at most 16 query
        rows per sequence run its unpadded ring kernel, :mod:`kernelopt.kernels.mla.ring`).
    config : SplitKVConfig, optional
        Split-KV launch knobs (the strategy's ``default_config`` when omitted).
    num_sms : int, optional
        Multiprocessors the scheduler balances over (the device's count by default).
    num_splits : int or sequence of int, optional
        Force the pieces per sequence instead of the scheduler's choice (tuning, tests):
        one for all (an int, a NumPy integer or a 0-d integer tensor), or one per sequence
        (a list, a 1-D NumPy array or a tensor).
    workspace : torch.Tensor, optional
        Caller-owned 1-D contiguous float32 or uint8 buffer on ``device`` for the partial
        outputs, at least :attr:`workspace_bytes` long; allocated here when omitted. Its
        bytes must not meet those of a run's ``q``, cache or block table (``run`` refuses
        such inputs: the partials would overwrite what other programs still read).
    partial_dtype : torch.dtype, optional
        Type of the split pieces' partial outputs in the workspace (the merge combines them
        in float32 either way). By default ``dtype`` where the seesaw strategy runs its ring
        kernel on a dense cache (at most 16 query rows: half the bytes stored and merged),
        float32 everywhere else; ``torch.float32`` keeps full partials on any plan, and
        ``dtype`` (16-bit) is taken by the split-KV and ring kernels
        (:func:`resolve_partial_dtype`). A 16-bit partial is rounded once more, to the
        output's own precision: at b=32 s=1 h=16 in bfloat16 the relative error went from
        1.75e-3 to 2.17e-3 (exp 50).
    kv_fp8 : bool
        The runs read a cache in the 656-byte FP8 layout
        (:func:`~kernelopt.kernels.mla.fp8.quantize_kv_fp8`): strategy ``split_kv`` (any
        row count, with its FP8 launch knobs) or ``seesaw`` (bfloat16 queries, at most 16
        query rows a sequence: :mod:`kernelopt.kernels.mla.ring_fp8`). ``run`` then
        requires that layout.

    Examples
    --------
    >>> plan = MLADecodePlan(cache_seqlens, s_q=1, h_q=128, page_size=64,
    ...                      softmax_scale=192 ** -0.5, dtype=torch.bfloat16)
    >>> for layer in layers:                                   # doctest: +SKIP
    ...     out, lse = plan.run(q[layer], kv_cache[layer], block_table)
    """

    def __init__(
        self,
        cache_seqlens: torch.Tensor | np.ndarray[Any, Any] | Sequence[int],
        *,
        s_q: int,
        h_q: int,
        page_size: int,
        softmax_scale: float,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
        causal: bool = True,
        strategy: Strategy = "split_kv",
        config: SplitKVConfig | None = None,
        num_sms: int | None = None,
        num_splits: int | Sequence[int] | None = None,
        workspace: torch.Tensor | None = None,
        kv_fp8: bool = False,
        partial_dtype: torch.dtype | None = None,
    ) -> None:
        import torch

        self._s_q = check_positive_int(s_q, "s_q")
        self._h_q = check_positive_int(h_q, "h_q")
        self._page_size = check_positive_int(page_size, "page_size")
        self._softmax_scale = check_softmax_scale(softmax_scale)
        dtype_given = dtype is not None
        dtype = torch.bfloat16 if dtype is None else dtype
        if dtype not in (torch.bfloat16, torch.float16, torch.float32):
            # repr, here and below: dtype="float32" must not read "got float32".
            raise InputError(expected("bfloat16, float16 or float32", repr(dtype), where="dtype"))
        self._dtype = dtype
        if strategy not in STRATEGIES:
            raise InputError(
                expected(f"one of {list(STRATEGIES)}", repr(strategy), where="strategy")
            )
        self._strategy: Strategy = strategy
        self._causal = check_flag(causal, "causal")
        self._mask_draft = _masks_draft_tokens(self._causal, self._s_q)
        if not isinstance(kv_fp8, bool):
            raise InputError(expected("a bool", repr(kv_fp8), where="kv_fp8"))
        if kv_fp8 and strategy not in ("split_kv", "seesaw"):
            raise InputError(
                expected(
                    "strategy 'split_kv' or 'seesaw' for an FP8 cache (kv_fp8=True)",
                    repr(strategy),
                    where="strategy",
                )
            )
        if kv_fp8 and strategy == "seesaw":
            seesaw.check_fp8_rows(self._s_q * self._h_q)
            if dtype not in (None, torch.bfloat16):
                raise InputError(
                    expected(
                        "dtype bfloat16 for strategy 'seesaw' with an FP8 cache",
                        str(dtype),
                        where="dtype",
                    )
                )
        self._kv_fp8 = kv_fp8
        check_config(config)
        if num_sms is not None:
            num_sms = check_positive_int(num_sms, "num_sms")

        # Named in a device refusal: a meta or other unrunnable device read from the
        # lengths is no fault of a device= the caller never passed.
        origin = device_origin(device, cache_seqlens)
        if device is None:
            if isinstance(cache_seqlens, torch.Tensor):
                device = cache_seqlens.device
            else:
                device = "cuda" if torch.cuda.is_available() else "cpu"
        self._device = check_device(device)
        if self._device.type == "cuda" and not torch.cuda.is_available():
            raise DeviceError(expected("a CUDA device for device='cuda'", "none available"))
        if self._device.type == "cuda" and self._device.index is None:
            self._device = torch.device("cuda", torch.cuda.current_device())
        if self._device.type == "cpu":
            # Tensors made on "cpu:0" report "cpu", which does not compare equal to it.
            self._device = torch.device("cpu")
        if strategy == "seesaw":
            _check_seesaw_target(self._device, dtype, origin)
        else:
            check_runnable_device(self._device, where=origin)
            check_interpreter_dtype(self._device, dtype, defaulted=not dtype_given)

        seqlens = _host_seqlens(cache_seqlens)
        if not seqlens:
            raise InputError(expected("at least one sequence", "[]", where="cache_seqlens"))
        check_seqlen_values(seqlens, s_q=self._s_q)
        self._seqlens = tuple(seqlens)
        self._max_seqlen = max(seqlens)
        self._seqlens_dev = torch.tensor(seqlens, dtype=torch.int32).to(self._device)

        rows = self._s_q * self._h_q
        # The Hopper kernel serves shapes with a full 64-row tile; fewer rows run split-KV.
        small = (strategy == "hopper" and rows < hopper.MIN_ROWS) or (
            strategy == "seesaw" and rows < seesaw.MIN_ROWS
        )
        self._kernel: str = "split_kv" if small else strategy
        if config is None and kv_fp8 and self._kernel == "split_kv":
            config = default_config(rows, dtype, kv_fp8=True)
        if config is None:
            config = _DEFAULT_CONFIGS.get(self._kernel, default_config)(rows, dtype)
        self._config = config
        self._partial_dtype = resolve_partial_dtype(
            partial_dtype, kernel=self._kernel, rows=rows, dtype=dtype, kv_fp8=kv_fp8
        )
        if self._kernel in ("hopper", "seesaw") and self._page_size % config.block_n:
            raise InputError(
                expected(
                    f"a page size that is a multiple of {config.block_n} for strategy "
                    f"'{self._kernel}' (strategy 'split_kv' takes any page size)",
                    self._page_size,
                    where="page_size",
                )
            )
        self._scratch = hopper.ScratchAllocator(self._device)
        self._schedule: Schedule | None = None
        self._units: torch.Tensor | None = None
        self._offsets: torch.Tensor | None = None
        self._o_part: torch.Tensor | None = None
        self._lse_part: torch.Tensor | None = None
        self._counters: torch.Tensor | None = None
        # A caller-owned workspace the runs' outputs must stay clear of.
        self._caller_workspace: dict[str, torch.Tensor] = {}
        # Keyword arguments only the seesaw launcher takes, fixed at plan time.
        self._seesaw_merge: dict[str, Any] = {}
        # Schedule.uniform_pieces walks every sequence: read once here, not at every run.
        self._uniform_pieces = 0
        self._workspace_numel = 0
        if workspace is not None:
            # Checked whether or not this step's lengths need it, so a bad buffer is not
            # refused only on the steps that split.
            self._check_workspace_kind(workspace)
        if strategy in ("split_kv", "hopper", "seesaw"):
            self._plan_split_kv(rows, num_sms, num_splits, workspace)

    def _plan_split_kv(
        self,
        rows: int,
        num_sms: int | None,
        num_splits: int | Sequence[int] | None,
        workspace: torch.Tensor | None,
    ) -> None:
        import torch

        config = self._config
        m_tiles = triton.cdiv(rows, config.block_m)
        if num_splits is None:
            sms = num_sms if num_sms is not None else device_num_sms(self._device)
            schedule = plan_schedule(
                self._seqlens,
                block_n=config.block_n,
                m_tiles=m_tiles,
                num_slots=sms * config.ctas_per_sm,
                overhead_tiles=config.overhead_tiles,
            )
        else:
            schedule = build_schedule(
                self._seqlens, num_splits, block_n=config.block_n, m_tiles=m_tiles
            )
        self._schedule = schedule
        self._uniform_pieces = schedule.uniform_pieces
        self._units, self._offsets = schedule_tensors(schedule, self._device)
        if not schedule.has_splits:
            return
        slots = schedule.split_offsets[-1]
        self._workspace_numel = workspace_numel(slots, rows, self._partial_dtype)
        if workspace is None:
            buffer = torch.empty(self._workspace_numel, dtype=torch.float32, device=self._device)
        else:
            buffer = self._adopt_workspace(workspace)
            self._caller_workspace = {"workspace": buffer}
        self._o_part, self._lse_part = split_workspace(buffer, slots, rows, self._partial_dtype)
        if self._kernel == "seesaw":
            # The seesaw kernel merges two-piece sequences itself; its counters start at
            # zero and every run leaves them there.
            numel = seesaw.counters_numel(len(self._seqlens), rows)
            self._counters = torch.zeros(numel, dtype=torch.int32, device=self._device)
            self._seesaw_merge = {
                "counters": self._counters,
                "pairs_only": max(schedule.splits) <= 2,
            }

    def _check_workspace_kind(self, workspace: torch.Tensor) -> None:
        """A 1-D contiguous float32 or uint8 tensor on the plan's device."""
        import torch

        if not isinstance(workspace, torch.Tensor):
            raise InputError(
                expected("a torch.Tensor", type(workspace).__name__, where="workspace")
            )
        if workspace.dtype not in (torch.float32, torch.uint8):
            raise InputError(
                expected("dtype float32 or uint8", str(workspace.dtype), where="workspace")
            )
        if workspace.dim() != 1 or not workspace.is_contiguous():
            raise InputError(
                expected("a 1-D contiguous tensor", list(workspace.shape), where="workspace")
            )
        if workspace.device != self._device:
            raise InputError(
                expected(f"device {self._device}", str(workspace.device), where="workspace")
            )

    def _adopt_workspace(self, workspace: torch.Tensor) -> torch.Tensor:
        import torch

        nbytes = workspace.numel() * workspace.element_size()
        if nbytes < self.workspace_bytes:
            raise InputError(
                expected(f"at least {self.workspace_bytes} bytes", nbytes, where="workspace")
            )
        if workspace.dtype == torch.uint8:
            if workspace.data_ptr() % 16:
                raise InputError(
                    expected("a 16-byte aligned buffer", "an offset view", where="workspace")
                )
            workspace = workspace[: (nbytes // 4) * 4].view(torch.float32)
        return workspace[: self._workspace_numel]

    # ------------------------------------------------------------------ properties

    @property
    def kv_fp8(self) -> bool:
        """Whether the runs read a cache in the FP8 layout (``kv_fp8=True`` at planning)."""
        return self._kv_fp8

    @property
    def batch_size(self) -> int:
        """Sequences in the batch."""
        return len(self._seqlens)

    @property
    def s_q(self) -> int:
        """Draft tokens per sequence."""
        return self._s_q

    @property
    def h_q(self) -> int:
        """Query heads."""
        return self._h_q

    @property
    def page_size(self) -> int:
        """Rows per KV-cache page."""
        return self._page_size

    @property
    def softmax_scale(self) -> float:
        """Scale of ``q · k`` before the softmax."""
        return self._softmax_scale

    @property
    def causal(self) -> bool:
        """Whether the draft tokens are causally masked among themselves."""
        return self._causal

    @property
    def dtype(self) -> torch.dtype:
        """Query, cache and output dtype."""
        return self._dtype

    @property
    def device(self) -> torch.device:
        """Device of every tensor a run takes."""
        return self._device

    @property
    def strategy(self) -> Strategy:
        """Kernel family this plan runs."""
        return self._strategy

    @property
    def seqlens(self) -> tuple[int, ...]:
        """The cache lengths the plan was made for."""
        return self._seqlens

    @property
    def config(self) -> SplitKVConfig:
        """Split-KV launch knobs."""
        return self._config

    @property
    def schedule(self) -> Schedule | None:
        """The split-KV schedule (None for the naive strategy; hopper shares it)."""
        return self._schedule

    @property
    def workspace_bytes(self) -> int:
        """Bytes of partial outputs and LSEs this plan needs (0 without splits)."""
        return self._workspace_numel * 4

    @property
    def partial_dtype(self) -> torch.dtype:
        """Type of the split pieces' partial outputs (see ``partial_dtype`` at planning)."""
        return self._partial_dtype

    # ------------------------------------------------------------------ run

    def _check_planned_shape(self, q: torch.Tensor) -> None:
        """Refuse a 4-dim ``q`` whose ``[b, s_q, h_q]`` is not the planned one.

        Parameters
        ----------
        q : torch.Tensor
            ``[b, s_q, h_q, d]``; the head dim ``d`` is left to :func:`check_inputs`.
        """
        planned = (self.batch_size, self._s_q, self._h_q)
        if tuple(q.shape[:3]) != planned:
            raise InputError(
                expected(
                    f"q of shape [{planned[0]}, {planned[1]}, {planned[2]}, 576] (as planned)",
                    list(q.shape),
                    where="q",
                )
            )

    def run(
        self,
        q: torch.Tensor,
        kv_cache: torch.Tensor,
        block_table: torch.Tensor,
        *,
        out: torch.Tensor | None = None,
        lse: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend ``q`` to the paged cache with the planned lengths.

        Only tensor metadata is checked, nothing is read back from the device, and with
        ``out`` and ``lse`` given nothing is allocated: a run can be captured in a CUDA
        graph and replayed while the plan lives.

        Parameters
        ----------
        q : torch.Tensor
            ``[b, s_q, h_q, 576]`` in the plan's dtype, on the plan's device.
        kv_cache : torch.Tensor
            ``[num_blocks, page_size, 1, 576]``, same dtype; values are columns ``[:512]``.
            Planned with ``kv_fp8=True``: ``[num_blocks, page_size, 1, 656]`` uint8, the FP8
            layout (:func:`~kernelopt.kernels.mla.fp8.quantize_kv_fp8`).
        block_table : torch.Tensor
            ``[b, max_blocks]`` int32, wide enough for the longest planned sequence.
        out, lse : torch.Tensor, optional
            Caller-owned outputs ``[b, s_q, h_q, 512]`` (q's dtype) and ``[b, h_q, s_q]``
            float32; allocated when omitted. Their byte spans must not meet each other's,
            nor those of ``q``, the cache, the block table or a caller-owned workspace.
            A caller-owned workspace must not meet ``q``, the cache or the block table
            either.

        Returns
        -------
        out : torch.Tensor
            ``[b, s_q, h_q, 512]`` in q's dtype.
        lse : torch.Tensor
            ``[b, h_q, s_q]`` float32, natural log of the softmax denominators.
        """
        import torch

        # q against the plan first: check_inputs holds the cache to q's dtype, and a q of
        # another dtype than planned would be reported as a cache of the wrong one.
        if isinstance(q, torch.Tensor) and q.dtype != self._dtype:
            raise InputError(expected(f"dtype {self._dtype} (as planned)", str(q.dtype), where="q"))
        # Likewise its device: check_inputs holds the cache to q's, and would name the cache.
        if isinstance(q, torch.Tensor) and q.device != self._device:
            raise InputError(
                expected(f"device {self._device} (as planned)", str(q.device), where="q")
            )
        # q's batch against the plan before check_inputs, which holds the block table to q's
        # batch: a q short of a sequence would be reported as a block table one row too long.
        if isinstance(q, torch.Tensor) and q.dim() == 4:
            self._check_planned_shape(q)
        batch, s_q, h_q, page = check_inputs(q, kv_cache, block_table, allow_fp8=self._kv_fp8)
        if self._kv_fp8 and kv_cache.dtype != torch.uint8:
            raise InputError(
                expected(
                    "a uint8 cache [..., 656] in the FP8 layout (planned with kv_fp8=True)",
                    f"{kv_cache.dtype} {list(kv_cache.shape)}",
                    where="kv_cache",
                )
            )
        if page != self._page_size:
            raise InputError(
                expected(f"page size {self._page_size} (as planned)", page, where="kv_cache")
            )
        # The lengths were checked against s_q at plan time; only the table width is new.
        longest = (self._max_seqlen,)
        check_seqlen_values(longest, s_q=s_q, page_size=page, max_blocks=block_table.shape[1])
        if self._device.type == "cpu":
            # A host table costs no sync to read, and the interpreter would read a page
            # outside the cache at an address past it (a wrong answer, or a crash).
            check_page_indices(
                block_table, self._seqlens, page_size=page, num_blocks=kv_cache.shape[0]
            )
        inputs = {"q": q, "kv_cache": kv_cache, "block_table": block_table}
        check_outputs(
            out,
            lse,
            batch=batch,
            s_q=s_q,
            h_q=h_q,
            dtype=q.dtype,
            device=q.device,
            reads=inputs | self._caller_workspace,
        )
        if self._caller_workspace:
            # The pieces write their partials there while other programs read the inputs.
            check_workspace_disjoint(self._caller_workspace["workspace"], inputs)
        if out is None:
            out = torch.empty(batch, s_q, h_q, D_V, dtype=q.dtype, device=q.device)
        if lse is None:
            lse = torch.empty(batch, h_q, s_q, dtype=torch.float32, device=q.device)

        if self._strategy == "naive":
            launch_naive(
                q,
                kv_cache,
                block_table,
                self._seqlens_dev,
                out,
                lse,
                softmax_scale=self._softmax_scale,
                causal=self._mask_draft,
            )
            return out, lse
        schedule = self._schedule
        assert schedule is not None and self._units is not None and self._offsets is not None
        if self._kernel in ("hopper", "seesaw"):
            launch = hopper.launch_hopper if self._kernel == "hopper" else seesaw.launch_seesaw
            launch(
                q,
                kv_cache,
                block_table,
                self._seqlens_dev,
                self._units,
                self._offsets,
                out,
                lse,
                o_part=self._o_part,
                lse_part=self._lse_part,
                softmax_scale=self._softmax_scale,
                causal=self._mask_draft,
                num_units=schedule.num_units,
                has_splits=schedule.has_splits,
                config=self._config,
                scratch=self._scratch,
                uniform_pieces=self._uniform_pieces,
                **self._seesaw_merge,
            )
            return out, lse
        launch_split_kv(
            q,
            kv_cache,
            block_table,
            self._seqlens_dev,
            self._units,
            self._offsets,
            out,
            lse,
            o_part=self._o_part,
            lse_part=self._lse_part,
            softmax_scale=self._softmax_scale,
            causal=self._mask_draft,
            num_units=schedule.num_units,
            has_splits=schedule.has_splits,
            tile_in_page=tile_in_page(page, schedule.block_n, self._config.block_n),
            config=self._config,
            uniform_pieces=self._uniform_pieces,
        )
        return out, lse

    def __repr__(self) -> str:
        splits = None if self._schedule is None else self._schedule.num_units
        return (
            f"MLADecodePlan(strategy={self._strategy!r}, batch_size={self.batch_size}, "
            f"s_q={self._s_q}, h_q={self._h_q}, page_size={self._page_size}, "
            f"dtype={self._dtype}, device={self._device}, causal={self._causal}, "
            f"pieces={splits})"
        )


# ---------------------------------------------------------------------------- FlashMLA-shaped


def get_mla_metadata(
    cache_seqlens: torch.Tensor,
    num_q_tokens_per_head_k: int,
    num_heads_k: int,
    num_heads_q: int | None = None,
    is_fp8_kvcache: bool = False,
    topk: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Schedule a decode step, with FlashMLA's signature.

    Parameters
    ----------
    cache_seqlens : torch.Tensor
        ``[b]`` int32 cache lengths, each at least 1 (read once on the host).
    num_q_tokens_per_head_k : int
        ``s_q · h_q // h_k``: query rows per latent KV head.
    num_heads_k : int
        KV heads; absorbed MLA has 1.
    num_heads_q : int, optional
        Accepted for FlashMLA compatibility and unused, but checked: a positive integer
        or None.
    is_fp8_kvcache : bool
        Whether the cache is in the 656-byte FP8 layout (:mod:`kernelopt.kernels.mla.fp8`);
        it picks the key tile the pieces are cut on. A call may pass another flag: it reads
        the tile from the metadata.
    topk : int, optional
        FlashMLA's sparse attention, not supported: must stay None.

    Returns
    -------
    tile_scheduler_metadata : torch.Tensor
        ``[num_pieces, 4]`` int32 on ``cache_seqlens``'s device: one row
        ``[batch, key_start, key_end, slot]`` per piece. Opaque to callers.
    num_splits : torch.Tensor
        ``[b + 1]`` int32 prefix sums of the pieces per sequence (FlashMLA's layout).
    """
    import torch

    # FlashMLA needs it for sparse attention only; a wrong one is still a caller's mistake.
    if num_heads_q is not None:
        check_positive_int(num_heads_q, "num_heads_q")

    if not isinstance(cache_seqlens, torch.Tensor) or cache_seqlens.dim() != 1:
        got = (
            list(cache_seqlens.shape) if isinstance(cache_seqlens, torch.Tensor) else cache_seqlens
        )
        raise InputError(expected("a [b] int32 tensor", got, where="cache_seqlens"))
    check_cache_seqlens(cache_seqlens, batch=cache_seqlens.shape[0])
    if cache_seqlens.shape[0] == 0:
        # Else the scheduler refuses it under its own argument name, "seqlens".
        raise InputError(expected("at least one sequence", "[]", where="cache_seqlens"))
    if check_positive_int(num_heads_k, "num_heads_k") != 1:
        raise InputError(expected("one latent KV head", num_heads_k, where="num_heads_k"))
    # As every other flag: a string shows quoted ("got 'True'"), not as a bool would read.
    check_flag(is_fp8_kvcache, "is_fp8_kvcache")
    if topk is not None:
        raise InputError(expected("dense attention (topk=None)", repr(topk), where="topk"))
    rows = check_positive_int(num_q_tokens_per_head_k, "num_q_tokens_per_head_k")
    config = default_config(rows, kv_fp8=is_fp8_kvcache)
    seqlens = _host_seqlens(cache_seqlens)
    for i, n in enumerate(seqlens):
        if n < 1:
            raise InputError(
                expected("a cache length of at least 1", n, where=f"cache_seqlens[{i}]")
            )
    schedule = plan_schedule(
        seqlens,
        block_n=config.block_n,
        m_tiles=triton.cdiv(rows, config.block_m),
        num_slots=device_num_sms(cache_seqlens.device) * config.ctas_per_sm,
        overhead_tiles=config.overhead_tiles,
    )
    meta, splits = schedule_tensors(schedule, cache_seqlens.device)
    # The metadata carries what it was scheduled for. Pieces start on multiples of its key
    # tile, which decides whether a call's tiles stay inside a page, and its key ranges are
    # the lengths read here, which a call checks against its block table and s_q without
    # reading anything back. A copy of the tensor loses it: the tile is then the safe one
    # below, and the lengths go unchecked.
    shortest = min(range(len(seqlens)), key=seqlens.__getitem__)
    scheduled = _Scheduled(
        len(seqlens),
        rows,
        config.block_n,
        shortest,
        seqlens[shortest],
        max(seqlens),
        tuple(seqlens),
        schedule.splits,
    )
    # Both halves carry it, so a call can tell a pair that belongs together.
    setattr(meta, _SCHEDULED, scheduled)
    setattr(splits, _SCHEDULED, scheduled)
    return meta, splits


_SCHEDULED = "_kernelopt_scheduled"


class _Scheduled(NamedTuple):
    """What :func:`get_mla_metadata` scheduled a metadata tensor for."""

    batch: int
    """Sequences; the pieces name them by index."""
    rows: int
    """Query rows per sequence (``s_q · h_q``)."""
    block_n: int
    """Key tile the pieces were cut on."""
    shortest_index: int
    """Index of the shortest sequence."""
    shortest: int
    """Its length."""
    longest: int
    """Length of the longest sequence."""
    seqlens: tuple[int, ...]
    """Every sequence's length."""
    splits: tuple[int, ...]
    """Pieces per sequence: with the lengths, the tile and the rows, the whole schedule."""


def _keys_read(meta: torch.Tensor, batch: int) -> list[int]:
    """Keys each sequence's pieces read (the end of its last piece), from host metadata.

    A row naming a sequence outside the batch, or an empty or negative key range, is
    refused: its program would read and write outside ``q`` and ``out``.
    """
    reach = [0] * batch
    for row in meta.tolist():
        b, start, end, _slot = row
        if not (0 <= b < batch and 0 <= start < end):
            raise InputError(
                expected(
                    f"pieces [batch, key_start, key_end, slot] with batch in [0, {batch}) "
                    "and 0 <= key_start < key_end",
                    row,
                    where="tile_scheduler_metadata",
                )
            )
        reach[b] = max(reach[b], end)
    return reach


def _check_pieces(meta: torch.Tensor, num_splits: torch.Tensor, lengths: Sequence[int]) -> None:
    """Hold host metadata to a schedule of ``lengths``: what the kernels trust it to be.

    Each sequence's pieces must cover its keys ``[0, lengths[b])`` once each, ``num_splits``
    must be the prefix sums of the pieces per sequence, and the pieces of a split sequence
    must write its slots ``num_splits[b] …`` (a sequence in one piece writes its output
    directly, slot -1). A copy of the metadata (``.clone()``) carries no record of the
    lengths it was made for; without this check it would attend over those lengths, and a
    slot past the workspace would be written past it.

    Parameters
    ----------
    meta : torch.Tensor
        ``[num_pieces, 4]`` int32 host rows ``[batch, key_start, key_end, slot]``, each
        already checked to name a sequence of the batch and a non-empty key range.
    num_splits : torch.Tensor
        ``[b + 1]`` int32 host prefix sums.
    lengths : sequence of int
        ``cache_seqlens`` of this call, one per sequence.

    Raises
    ------
    InputError
        Naming the first sequence whose pieces do not match, or ``num_splits``.
    """
    pieces: list[list[tuple[int, int, int]]] = [[] for _ in lengths]
    for b, start, end, slot in meta.tolist():
        pieces[b].append((start, end, slot))
    for b, own in enumerate(pieces):
        own.sort()
        ranges = [(start, end) for start, end, _slot in own]
        # Sorted by start, the pieces tile [0, length) when each starts where the last ended.
        ends = [0] + [end for _start, end in ranges]
        starts = [start for start, _end in ranges]
        if not ranges or starts != ends[:-1] or ends[-1] != lengths[b]:
            shown = ", ".join(f"[{start}, {end})" for start, end in ranges) or "no piece"
            raise InputError(
                expected(
                    f"pieces of sequence {b} that cover its keys [0, {lengths[b]}) once each "
                    "(make the metadata again with get_mla_metadata for these lengths)",
                    shown,
                    where="tile_scheduler_metadata",
                )
            )
    offsets = [0]
    for own in pieces:
        offsets.append(offsets[-1] + len(own))
    if num_splits.tolist() != offsets:
        raise InputError(
            expected(
                f"the prefix sums of the pieces per sequence in tile_scheduler_metadata "
                f"({offsets})",
                num_splits.tolist(),
                where="num_splits",
            )
        )
    for b, own in enumerate(pieces):
        slots = sorted(slot for _start, _end, slot in own)
        wanted = [-1] if len(own) == 1 else list(range(offsets[b], offsets[b + 1]))
        if slots != wanted:
            raise InputError(
                expected(
                    f"the pieces of sequence {b} to write slots {wanted} (num_splits[{b}] on; "
                    "-1 for a sequence in one piece)",
                    slots,
                    where="tile_scheduler_metadata",
                )
            )


# The key tile every schedule's tile is a multiple of, for metadata made elsewhere.
_SAFE_TILE = 16


def mla_decode_with_kvcache(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    block_table: torch.Tensor,
    cache_seqlens: torch.Tensor,
    head_dim_v: int,
    tile_scheduler_metadata: torch.Tensor,
    num_splits: torch.Tensor,
    softmax_scale: float | None = None,
    causal: bool = False,
    is_fp8_kvcache: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Split-KV MLA decode with FlashMLA's ``flash_mla_with_kvcache`` signature.

    Like FlashMLA it allocates its outputs (and, when sequences are split, the float32
    partials) on every call; use :class:`MLADecodePlan` for allocation-free runs.

    Parameters
    ----------
    q : torch.Tensor
        ``[b, s_q, h_q, 576]``.
    k_cache : torch.Tensor
        ``[num_blocks, page_size, 1, 576]``; values are columns ``[:head_dim_v]``. With
        ``is_fp8_kvcache``, ``[num_blocks, page_size, 1, 656]`` uint8 in FlashMLA's FP8
        layout (:func:`~kernelopt.kernels.mla.fp8.quantize_kv_fp8`).
    block_table : torch.Tensor
        ``[b, max_blocks]`` int32.
    cache_seqlens : torch.Tensor
        ``[b]`` int32 on q's device, the lengths given to :func:`get_mla_metadata`.
    head_dim_v : int
        Must be 512.
    tile_scheduler_metadata, num_splits : torch.Tensor
        ``[num_pieces, 4]`` and ``[b + 1]`` int32, from :func:`get_mla_metadata` for these
        lengths; it must be made for ``b`` sequences, and the lengths it was made for
        must each be at least ``s_q`` and fit the block table (checked without a host
        read). On the CPU the pieces themselves are read, their pages checked against the
        block table and the cache, and ``cache_seqlens`` must hold the lengths the metadata
        was made for (a copy, which carries no lengths, by its pieces: each sequence's keys
        covered once, ``num_splits`` their prefix sums); on a GPU keeping them so is the
        caller's part (reading them back would sync the device), as with FlashMLA.
    softmax_scale : float, optional
        Defaults to ``576 ** -0.5`` (``q.shape[-1] ** -0.5``), as in FlashMLA.
    causal : bool
        Causal mask among the draft tokens (FlashMLA's default is False).
    is_fp8_kvcache : bool
        Whether ``k_cache`` is in the FP8 layout; it must say so, as with FlashMLA.

    Returns
    -------
    out : torch.Tensor
        ``[b, s_q, h_q, 512]`` in q's dtype.
    softmax_lse : torch.Tensor
        ``[b, h_q, s_q]`` float32, natural log.
    """
    import torch

    is_fp8_kvcache = check_flag(is_fp8_kvcache, "is_fp8_kvcache")
    batch, s_q, h_q, page = check_inputs(
        q,
        k_cache,
        block_table,
        head_dim_v=head_dim_v,
        allow_fp8=is_fp8_kvcache,
        cache_name="k_cache",
    )
    if is_fp8_kvcache and k_cache.dtype != torch.uint8:
        raise InputError(
            expected(
                "a uint8 cache [..., 656] (is_fp8_kvcache=True)",
                str(k_cache.dtype),
                where="k_cache",
            )
        )
    check_cache_seqlens(cache_seqlens, batch=batch, device=q.device)
    check_runnable_device(q.device)
    check_interpreter_dtype(q.device, q.dtype)
    meta = tile_scheduler_metadata
    if not isinstance(meta, torch.Tensor) or meta.dim() != 2 or meta.shape[1] != 4:
        shape = list(meta.shape) if isinstance(meta, torch.Tensor) else type(meta).__name__
        raise InputError(
            expected(
                "metadata [num_pieces, 4] from get_mla_metadata",
                shape,
                where="tile_scheduler_metadata",
            )
        )
    if meta.dtype != torch.int32 or meta.device != q.device or meta.shape[0] < batch:
        raise InputError(
            expected(
                f"int32 metadata on {q.device} with at least {batch} rows",
                f"{meta.dtype} on {meta.device} with {meta.shape[0]} rows",
                where="tile_scheduler_metadata",
            )
        )
    if not meta.is_contiguous():
        raise InputError(
            expected("contiguous metadata", list(meta.stride()), where="tile_scheduler_metadata")
        )
    if (
        not isinstance(num_splits, torch.Tensor)
        or tuple(num_splits.shape) != (batch + 1,)
        or num_splits.dtype != torch.int32
        or num_splits.device != q.device
    ):
        got = (
            f"{list(num_splits.shape)} {num_splits.dtype} on {num_splits.device}"
            if isinstance(num_splits, torch.Tensor)
            else type(num_splits).__name__
        )
        raise InputError(expected(f"int32 [{batch + 1}] on {q.device}", got, where="num_splits"))
    scale = q.shape[-1] ** -0.5 if softmax_scale is None else check_softmax_scale(softmax_scale)
    causal = check_flag(causal, "causal")

    rows = s_q * h_q
    config = default_config(rows, q.dtype, kv_fp8=is_fp8_kvcache)
    scheduled: _Scheduled | None = getattr(meta, _SCHEDULED, None)
    if scheduled is not None:
        # A piece of a sequence past the batch reads and writes past q and out; a sequence
        # with no piece is never written.
        if scheduled.batch != batch:
            raise InputError(
                expected(
                    f"metadata from get_mla_metadata for {batch} sequences (q's batch)",
                    f"metadata for {scheduled.batch}",
                    where="tile_scheduler_metadata",
                )
            )
        if scheduled.rows != rows:
            raise InputError(
                expected(
                    f"metadata from get_mla_metadata for {rows} query rows (s_q * h_q)",
                    f"metadata for {scheduled.rows}",
                    where="tile_scheduler_metadata",
                )
            )
        # The pieces cover the lengths the metadata was made for: every draft token must
        # see a key, and the block table must reach the longest sequence's last page.
        if scheduled.shortest < s_q:
            raise InputError(
                expected(
                    f"cache_seqlens >= s_q = {s_q}",
                    scheduled.shortest,
                    where=f"cache_seqlens[{scheduled.shortest_index}]",
                )
            )
        check_seqlen_values(
            (scheduled.longest,), s_q=s_q, page_size=page, max_blocks=block_table.shape[1]
        )
    # The metadata's own tile, whatever flag or rows this call passes; unknown metadata
    # (a copy, another library's) gets the tile every schedule is a multiple of.
    split_counts_of: _Scheduled | None = getattr(num_splits, _SCHEDULED, None)
    # The pair from one call shares one record: identity settles it without a comparison.
    if (
        scheduled is not None
        and split_counts_of is not None
        and split_counts_of is not scheduled
        and split_counts_of != scheduled
    ):
        # The counts place each piece's partial in a workspace slot: another schedule's
        # send the merge to slots this one never wrote, or past the workspace.
        raise InputError(
            expected(
                "the num_splits get_mla_metadata returned with tile_scheduler_metadata",
                "the num_splits of another get_mla_metadata call (other lengths or pieces)",
                where="num_splits",
            )
        )
    schedule_block_n = _SAFE_TILE if scheduled is None else scheduled.block_n
    if q.device.type == "cpu":
        # As in MLADecodePlan.run: host tensors cost no sync to read. The pieces read the
        # key ranges the metadata holds, whether or not it carries its lengths.
        reach = _keys_read(meta, batch)
        lengths = [int(n) for n in cache_seqlens.tolist()]
        if scheduled is None:  # else its lengths were checked above
            check_seqlen_values(lengths, s_q=s_q)
        elif tuple(lengths) != scheduled.seqlens:
            # The pieces cover the lengths the metadata was made for and the kernels mask by
            # these: a longer sequence would lose its last keys, a wrong answer with no error.
            changed = next(i for i, n in enumerate(lengths) if n != scheduled.seqlens[i])
            raise InputError(
                expected(
                    f"the length get_mla_metadata was given ({scheduled.seqlens[changed]}); "
                    "make the metadata again for new lengths",
                    lengths[changed],
                    where=f"cache_seqlens[{changed}]",
                )
            )
        check_seqlen_values((max(reach),), s_q=1, page_size=page, max_blocks=block_table.shape[1])
        check_page_indices(block_table, reach, page_size=page, num_blocks=k_cache.shape[0])
        _check_pieces(meta, num_splits, lengths)
    num_pieces = meta.shape[0]
    # Every sequence has at least one piece: more rows than sequences means some split.
    has_splits = num_pieces > batch
    o_part = lse_part = None
    if has_splits:
        buffer = torch.empty(workspace_numel(num_pieces, rows), device=q.device)
        o_part, lse_part = split_workspace(buffer, num_pieces, rows)
    out = torch.empty(batch, s_q, h_q, D_V, dtype=q.dtype, device=q.device)
    lse = torch.empty(batch, h_q, s_q, dtype=torch.float32, device=q.device)
    launch_split_kv(
        q,
        k_cache,
        block_table,
        cache_seqlens,
        meta,
        num_splits,
        out,
        lse,
        o_part=o_part,
        lse_part=lse_part,
        softmax_scale=scale,
        causal=_masks_draft_tokens(causal, s_q),
        num_units=num_pieces,
        has_splits=has_splits,
        tile_in_page=tile_in_page(page, schedule_block_n, config.block_n),
        config=config,
    )
    return out, lse
