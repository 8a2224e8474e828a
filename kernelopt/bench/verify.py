"""Checks of a kernel's output against its reference.

- :func:`check_close`: a floating output against its float64 reference, by the relative
  error ``‖out − ref‖ / ‖ref‖`` computed in float64; a NaN or Inf in the output never
  passes.
- :func:`check_equal`: an exact output (token ids, indices, counts) element by element.

A relative norm averages over the whole tensor, which suits rounding in floats and hides
wrong integers: a sampler whose ids are 30 off in half the rows of a 152064-token
vocabulary reads as 2.2e-4. So :func:`check_close` refuses integer outputs and points to
:func:`check_equal`.

Each check raises :class:`~kernelopt.InputError` with ``Expected …, got …`` on failure,
naming the worst (or first) element.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from kernelopt._errors import InputError, expected
from kernelopt.bench.guards import _marked, _unravel

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    import torch

__all__ = ["check_close", "check_equal"]


def _torch() -> Any:
    import torch

    return torch


def _tensor(value: object, where: str) -> Any:
    torch = _torch()
    if not isinstance(value, torch.Tensor):
        got = type(value).__name__
        if hasattr(value, "__array_interface__"):
            got += " (pass torch.from_numpy(array))"
        raise InputError(expected("a torch tensor", got, where=where))
    return value


def _same_shape(out: Any, ref: Any) -> None:
    if tuple(out.shape) != tuple(ref.shape):
        said = ", ".join(str(n) for n in ref.shape)
        got = ", ".join(str(n) for n in out.shape)
        # No broadcasting: an output [n, 1] against a reference [n] would compare n² pairs.
        raise InputError(expected(f"out of the shape of ref [{said}]", f"[{got}]", where="out"))


def _at(where: str, tensor: Any, flat: int) -> str:
    """``out[i, j]`` for the ``flat``-th element of ``tensor`` in C order."""
    if not tensor.dim():
        return where
    return f"{where}[{', '.join(str(i) for i in _unravel(flat, tuple(tensor.shape)))}]"


def _value(tensor: Any, flat: int) -> str:
    value = tensor.reshape(-1)[flat].item()
    return format(value, ".6g") if isinstance(value, float) else repr(value)


def _non_finite(where: str, tensor: Any) -> str | None:
    """``"2 non-finite elements in out of shape [4], the first at out[1] = nan"``, or None
    when every element of ``tensor`` is finite."""
    torch = _torch()
    mask = ~torch.isfinite(tensor)
    count, text = _marked(where, tensor, mask)
    if not count:
        return None
    flat = int(mask.reshape(-1).to(torch.uint8).argmax().item())
    noun = "element" if count == 1 else "elements"
    return f"{count} non-finite {noun} {text} = {_value(tensor, flat)}"


def _relative_error(out64: Any, ref64: Any) -> float:
    """``‖out − ref‖ / ‖ref‖`` of two float64 tensors on one device; ``‖out − ref‖`` where
    ``ref`` is all zeros. NaN or Inf where either holds one: the caller checks."""
    torch = _torch()
    diff = torch.linalg.vector_norm(out64 - ref64)
    scale = torch.linalg.vector_norm(ref64)
    # A reference of zeros (a masked row, a zero-initialized gradient) has no scale: the
    # absolute error is the only one that means anything there.
    return float(diff / scale) if bool(scale != 0) else float(diff)


def check_close(out: torch.Tensor, ref: torch.Tensor, *, tol: float) -> float:
    """Require a floating output within ``tol`` of its reference; return the error.

    The error is ``‖out − ref‖ / ‖ref‖`` (2-norms over all elements) computed in
    float64, or the absolute ``‖out − ref‖`` where ``ref`` is all zeros.

    Parameters
    ----------
    out : Tensor
        The kernel's output: a floating tensor of any shape (float64 to float8), the
        shape of ``ref`` (no broadcasting).
    ref : Tensor
        The reference, of the same shape, every element finite; best computed in
        float64. Any real dtype; it may be on another device than ``out``.
    tol : float
        The largest error that passes: a finite number > 0 (1e-2 for bfloat16 outputs
        of a long reduction, 1e-5 for float32, as the dtype allows).

    Returns
    -------
    float
        The error, at most ``tol``.

    Raises
    ------
    InputError
        When the error is above ``tol``, naming it and the element furthest from the
        reference (``Expected a relative error <= 0.01 against the float64 reference,
        got 0.0316 (‖out − ref‖ / ‖ref‖); the worst element out[3, 1] = 1.5 against
        ref 0.25``); when ``out`` holds a NaN or an Inf, whatever ``tol``, naming the
        first; and before comparing: for ``out`` or ``ref`` not a tensor, shapes that
        differ, a ``ref`` with a NaN or an Inf, a ``tol`` that is not a finite number
        > 0, or an integer, bool or complex ``out`` (an exact output is checked with
        :func:`check_equal`).

    Examples
    --------
    >>> import torch
    >>> ref = torch.linspace(-1, 1, 64, dtype=torch.float64)
    >>> check_close(ref.to(torch.bfloat16), ref, tol=1e-2) < 1e-2
    True
    """
    torch = _torch()
    out = _tensor(out, "out")
    ref = _tensor(ref, "ref")
    numeric = isinstance(tol, int | float) and not isinstance(tol, bool)
    if not (numeric and math.isfinite(tol) and tol > 0):
        raise InputError(expected("a finite number > 0", repr(tol), where="tol"))
    if out.is_complex():
        raise InputError(expected("a real floating output", str(out.dtype), where="out"))
    if not out.is_floating_point():
        raise InputError(
            expected(
                "a real floating output",
                f"{out.dtype}: an exact output (token ids, indices, counts, masks) is checked "
                "with check_equal(out, ref); a relative error lets ids 30 off in half the "
                "rows of a 152064-token vocabulary pass at 2.2e-4",
                where="out",
            )
        )
    if ref.is_complex() or ref.dtype == torch.bool:
        raise InputError(expected("a real numeric reference", str(ref.dtype), where="ref"))
    _same_shape(out, ref)
    # Both in float64 before anything is computed: a bfloat16 difference rounds the error
    # it measures, and fp8 has no isfinite of its own.
    out64 = out.detach().to(torch.float64)
    ref64 = ref.detach().to(device=out.device, dtype=torch.float64)
    bad_ref = _non_finite("ref", ref64)
    if bad_ref is not None:
        # A NaN in the reference makes every error NaN: no output could be judged.
        raise InputError(expected("a reference with every element finite", bad_ref, where="ref"))
    what = f"a relative error <= {tol:g} against the float64 reference"
    bad_out = _non_finite("out", out64)
    if bad_out is not None:
        raise InputError(expected(what, bad_out))
    error = _relative_error(out64, ref64)
    if error <= tol:
        return error
    gap = (out64 - ref64).abs().reshape(-1)
    worst = int(gap.argmax().item())
    zeros = not bool(ref64.any())
    if zeros:
        what = f"an absolute error <= {tol:g} (ref is all zeros)"
    norm = "‖out − ref‖" if zeros else "‖out − ref‖ / ‖ref‖"
    raise InputError(
        expected(
            what,
            f"{error:.3g} ({norm}); the worst element {_at('out', out, worst)} = "
            f"{_value(out64, worst)} against ref {_value(ref64, worst)}",
        )
    )


def check_equal(out: torch.Tensor, ref: torch.Tensor) -> None:
    """Require every element of ``out`` equal to ``ref``: the check of an exact output.

    Token ids, indices, counts and masks have no rounding: one wrong element is a wrong
    kernel, however small its share of the norm.

    Parameters
    ----------
    out : Tensor
        The kernel's output, of any shape and dtype: the shape of ``ref``.
    ref : Tensor
        The reference, of the same shape. Values compare across dtypes (int32 ids
        against int64 ones); a NaN equals nothing.

    Raises
    ------
    InputError
        When some elements differ, with their count and the first
        (``Expected out equal to ref, got 76032 of 152064 elements different in out of
        shape [152064], the first at out[1] = 31 against ref 1``); before comparing,
        for ``out`` or ``ref`` not a tensor, or shapes that differ.

    Examples
    --------
    >>> import torch
    >>> ids = torch.tensor([3, 1, 4])
    >>> check_equal(ids.to(torch.int32), ids)
    """
    torch = _torch()
    out = _tensor(out, "out")
    ref = _tensor(ref, "ref")
    _same_shape(out, ref)
    mask = out.detach() != ref.detach().to(out.device)
    count, text = _marked("out", out, mask)
    if not count:
        return
    first = int(mask.reshape(-1).to(torch.uint8).argmax().item())
    raise InputError(
        expected(
            "out equal to ref",
            f"{count} of {out.numel()} elements different {text} = {_value(out, first)} "
            f"against ref {_value(ref, first)}",
        )
    )
