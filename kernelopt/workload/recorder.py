"""Record the shapes a Python function is called with, to a JSONL call trace.

Wrap the function that launches a kernel, run the real workload, and profile the file::

    from kernelopt.workload import Recorder, profile_trace

    recorder = Recorder("calls.jsonl", time="host", values=("cache_seqlens",))

    @recorder
    def mla_decode(q, kv_cache, block_table, cache_seqlens, softmax_scale): ...

    with recorder:            # the file is flushed and closed at the end of the block
        serve_requests()
    profile = profile_trace("calls.jsonl")

``recorder.patch(module, "name")`` wraps an existing function for the length of a ``with``
block instead. For each call the recorder writes the op name, every argument (tensors as
shape and dtype, found by duck typing: anything with ``.shape`` and ``.dtype``; numbers,
bools, strings, None and lists of numbers as values; other objects are left out) and,
optionally, its duration. Nothing here imports torch unless ``time="cuda"``.

Costs: building the line is a few microseconds per call (``benchmarks/workload_profile.py``
measures it); a values summary (min/max/mean of a tensor) synchronizes the device for that
argument; ``time="host"`` measures the host time of the call, which for asynchronous GPU
launches is the launch time, not the kernel time; ``time="cuda"`` brackets the call with
CUDA events and resolves them at flush, without synchronizing per call.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import inspect
import json
import math
import operator
import os
import sys
import threading
import time as _time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, overload

from kernelopt._errors import DeviceError, InputError, expected
from kernelopt._fileio import file_in_the_way
from kernelopt._words import and_list, count_text
from kernelopt.workload._validators import finite_float
from kernelopt.workload.calls import (
    _SURROGATE,
    MAX_DIM,
    MAX_DURATION_US,
    _check_encodable,
    _check_name,
)
from kernelopt.workload.dtypes import canonical_dtype

__all__ = ["TIMINGS", "Recorder", "RecorderWarning"]

TIMINGS = ("none", "host", "cuda")
F = TypeVar("F", bound=Callable[..., Any])


_SCALARS: dict[Any, str] = {True: "true", False: "false", None: "null"}
# Every int of smaller magnitude is a finite float. A larger one may be an int no float
# holds (the trace reader refuses the line, and the call with it) or one str() refuses
# to write (over 4300 digits: the recorded call itself would raise).
_FLOAT_SAFE_INT = 2**1023


def _dims(shape: Iterable[Any], name: str) -> str:
    """``shape`` as the JSON list's inside, once it holds what the trace reader accepts.

    A duck-typed array can report any shape: a fractional size was cut to an int and a
    negative one written, the first changing the call without a word, the second losing
    it when read. Either is refused here, at the call, as the reader would refuse it.
    """
    where = f"args.{name}.shape"
    try:
        dims = list(shape)
    except TypeError:
        raise InputError(expected("a shape (a sequence of sizes)", shape, where=where)) from None
    sizes = []
    for dim in dims:
        try:
            if isinstance(dim, bool):
                raise TypeError
            size = operator.index(dim)  # ints, numpy ints; not 2.7, not "2"
        except TypeError:
            raise InputError(expected("integer dims", dims, where=where)) from None
        if not 0 <= size <= MAX_DIM:
            raise InputError(expected("dims in [0, 2**40]", dims, where=where))
        sizes.append(str(size))
    return ",".join(sizes)


def _plain(value: Any) -> Any:
    """A numpy/torch scalar or an int/float/str subclass as the plain Python value."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def _huge_int(value: int) -> float:
    """An int beyond :data:`_FLOAT_SAFE_INT` as the float it is, or as the infinity of
    its sign where no float holds it (recorded as a non-finite float is: ``"inf"``)."""
    number = finite_float(value)
    if number is not None:
        return number
    return math.inf if value > 0 else -math.inf


def _strides(value: Any) -> tuple[int, ...] | None:
    """Element strides of a tensor or array (numpy counts bytes), or None if it has none."""
    layout = getattr(value, "layout", None)
    if layout is not None and str(layout) != "torch.strided":
        # A sparse COO tensor reports strides of 0: read as an expanded index, they would
        # make a sparse gather index an index select.
        return None
    try:
        stride = getattr(value, "stride", None)
        if callable(stride):  # torch
            return tuple(int(s) for s in stride())
        raw, size = getattr(value, "strides", None), getattr(value, "itemsize", None)
        if raw is not None and size:  # numpy and array types like it
            return tuple(int(s) // int(size) for s in raw)
    except (RuntimeError, ValueError, TypeError, AttributeError):
        pass  # sparse tensors have no strides: the call is still recorded
    return None


def _is_numpy_scalar(value: Any) -> bool:
    """Whether ``value`` is a numpy scalar (``np.int64(3)``), not a 0-d array or tensor."""
    numpy = sys.modules.get("numpy")  # a numpy scalar means numpy is imported already
    return numpy is not None and isinstance(value, numpy.generic)


def _has_no_order(value: Any) -> bool:
    """Whether ``value`` is empty or complex: no min, max or mean to summarize."""
    return 0 in tuple(value.shape) or "complex" in str(value.dtype)


def _stats(value: Any) -> tuple[float, float, float, float] | None:
    """(min, max, mean, population std) of a tensor or array, or None if it has none.

    A torch tensor is reduced on its device and read back in one transfer: the summary is
    taken inside the user's decode loop, and each read of a CUDA value synchronizes.
    """
    torch = sys.modules.get("torch")  # a torch tensor means torch is imported already
    try:
        if _has_no_order(value):
            # Reducing these warns (no degrees of freedom, a dropped imaginary part), and a
            # warning raised under `-W error` would fail the recorded call itself.
            return None
        if torch is not None and isinstance(value, torch.Tensor):
            flat = value.detach().reshape(-1).double()
            std, mean = torch.std_mean(flat, correction=0)
            low, high, mean, std = torch.stack((flat.min(), flat.max(), mean, std)).tolist()
        else:  # numpy and other array types: the population std is the default
            low, high, mean = float(value.min()), float(value.max()), float(value.mean())
            spread = getattr(value, "std", None)
            std = float(spread()) if callable(spread) else math.nan  # a duck type may lack it
    except (RuntimeError, ValueError, TypeError, AttributeError, IndexError):
        return None
    return low, high, mean, std


def _ends_mid_line(path: Path) -> bool:
    """Whether the file at ``path`` ends inside a line: a writer killed while flushing left
    it so, and a line appended to it would be read as part of the cut one."""
    try:
        with open(path, "rb") as handle:
            if handle.seek(0, os.SEEK_END) == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except OSError:  # no file yet: nothing to continue
        return False


_NOT_OWN = object()  # patch(): the attribute is not in the owner's own __dict__

# What is lost, per option naming arguments, where it names one that no call had.
_LOST = {
    "values": "no values summary of {} was recorded",
    "strides": "no strides of {} were recorded",
}
# Parameters that name no argument a call passes by that name (*args, **kwargs).
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
# Argument names a RecorderWarning lists before it counts the rest.
_NAMES_SHOWN = 20


class RecorderWarning(UserWarning):
    """A :class:`Recorder` option named an argument that no recorded call had.

    ``Recorder(values=("cache_seqlen",))`` for a function whose argument is
    ``cache_seqlens`` records no values summary, and the length rules then never fire.
    A parameter the recorded function has, left at its default in every call
    (``seqlens_q=None`` of a call that has no query lengths), was never given a value: it
    is no typo, and no warning names it.
    Said once per recorder, when it is closed (the end of ``with recorder:``) or, for one
    never closed, at the program's exit; ``warnings.filterwarnings("error",
    category=RecorderWarning)`` turns it into an error.
    """


def _unmatched_message(option: str, missing: Iterable[str], seen: list[str], calls: int) -> str:
    """One part of a :class:`RecorderWarning`: the ``option``'s names that no call had
    (``missing``), the argument names the ``calls`` recorded calls had (``seen``)."""
    names = sorted(missing)
    shown = seen[:_NAMES_SHOWN]
    if len(seen) > len(shown):
        shown = [*shown, f"{len(seen) - len(shown)} more"]
    had = and_list(shown) if shown else "none"
    lost = _LOST[option].format("it" if len(names) == 1 else "them")
    return expected(
        f"names of arguments the recorded calls had ({had})",
        f"{and_list(names)}, which no recorded call had ({count_text(calls, 'call')}): {lost}",
        where=option,
    )


def _check_op(op: object, *, optional: bool = True) -> None:
    # A name the trace readers refuse would lose every call recorded under it.
    if op is None and optional:
        return
    if not isinstance(op, str):
        raise InputError(expected("an op name (a string)", op, where="op"))
    _check_name("op name", op, "op")


def _arg_names(names: Iterable[str], where: str) -> frozenset[str]:
    # One name given as a string means that name, not its letters.
    items = (names,) if isinstance(names, str) else names
    try:
        chosen = frozenset(items)
    except TypeError:
        raise InputError(expected("argument names (strings)", names, where=where)) from None
    if not all(isinstance(name, str) for name in chosen):
        raise InputError(
            expected("argument names (strings)", sorted(map(repr, chosen)), where=where)
        )
    return chosen


def _writable(path: str | Path) -> Path:
    """``path`` as a Path, once it is known that a file can be written there.

    Checked when the recorder is built: the first write happens at a flush, often at
    interpreter exit, where an error would lose every call recorded until then.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(expected("a file path (str or Path)", type(path).__name__, where="path"))
    if not os.fspath(path):  # Path("") is the working directory: no file is named
        raise InputError(expected("a file path", "an empty path", where="path"))
    target = Path(path)
    if target.is_dir():
        raise InputError(expected("a file path", f"{target} (a directory)", where="path"))
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)  # created now, as the first flush would
    except OSError as error:
        raise InputError(
            expected(
                "a path whose directory can be created",
                f"{target} ({_reason(target, error)})",
                where="path",
            )
        ) from None
    if target.exists() and not os.access(target, os.W_OK):
        raise InputError(expected("a writable file", f"{target} (not writable)", where="path"))
    if not target.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(
            expected("a path in a writable directory", f"{target} (not writable)", where="path")
        )
    _try_open(target)
    return target


def _try_open(target: Path) -> None:
    """Open ``target`` for appending and close it again, writing nothing.

    Permission bits do not tell everything: root passes ``os.access`` for ``/proc`` and
    ``/sys``, where no file can be created. A file created by the attempt is removed again,
    so that a recorder that never records leaves nothing behind.
    """
    existed = os.path.lexists(target)  # a dangling link is kept, not removed below
    try:
        # O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader.
        handle = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as error:
        if error.errno == errno.ENXIO:  # a FIFO without a reader yet: one may come
            return
        raise InputError(
            expected(
                "a path where a file can be written",
                f"{target} ({_reason(target, error)})",
                where="path",
            )
        ) from None
    os.close(handle)
    if not existed:
        with contextlib.suppress(OSError):
            target.unlink()


def _reason(target: Path, error: OSError) -> str:
    """Why ``error`` happened at ``target``, in words: the file in the way of its folder,
    if any ("File exists" names neither it nor why a folder was wanted), else the OS's."""
    blocker = file_in_the_way(target)
    if blocker is not None:
        return f"{blocker} is a file"
    return error.strerror or type(error).__name__


class Recorder:
    """Log the shapes, dtypes, scalar arguments and optional duration of each call.

    Parameters
    ----------
    path : path-like
        The JSONL file to write; its parent directories are created here. A directory, or
        a place where no file can be written, is refused at once rather than at the
        first flush.
    time : {"none", "host", "cuda"}
        Whether and how to time each call (``duration_us`` in microseconds).
    values : iterable of str
        Names of tensor arguments whose values to summarize (min, max, mean), e.g. the
        sequence lengths ``("cache_seqlens",)``. A name no recorded call had (a typo) is
        named in a :class:`RecorderWarning` at the end of recording (:meth:`close`); a
        parameter of a recorded function left at its default in every call is not.
    strides : iterable of str
        Names of tensor arguments whose element strides to record, e.g. the index of a
        gather ``("index",)``: a stride of 0 shows an expanded index, the same along that
        axis, which makes a gather an index select. Checked against the calls as
        ``values`` is.
    append : bool
        Append to an existing file (default) or start it afresh; anything but a bool
        (``"no"``) is refused. Started afresh, the file is emptied at the first flush
        (:meth:`flush`, :meth:`close`, the end of a ``with`` block) even where no call was
        recorded, so that an earlier run's calls are not read as this one's.
    flush_every : int
        Calls buffered in memory before a write.

    Attributes
    ----------
    calls : int
        Calls recorded so far.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        time: str = "none",
        values: Iterable[str] = (),
        strides: Iterable[str] = (),
        append: bool = True,
        flush_every: int = 4096,
    ) -> None:
        if time not in TIMINGS:
            raise InputError(expected(f"time in {TIMINGS}", time, where="time"))
        if isinstance(flush_every, bool) or not isinstance(flush_every, int) or flush_every < 1:
            raise InputError(
                expected("flush_every as an integer >= 1", flush_every, where="flush_every")
            )
        # A truthy string ("no") would append where the caller meant to start afresh.
        if not isinstance(append, bool):
            raise InputError(expected("append as a bool", repr(append), where="append"))
        target = _writable(path)
        names = {"values": _arg_names(values, "values"), "strides": _arg_names(strides, "strides")}
        self._torch: Any = None
        if time == "cuda":
            # Checked here, not on the first recorded call inside the user's hot path, and
            # through cuda_available(): a bare `import torch` failed with ModuleNotFoundError
            # where torch is missing. Imported here: kernelopt.workload loads no torch.
            from kernelopt.bench.timer import cuda_available, no_cuda_reason

            if not cuda_available():
                raise DeviceError(
                    expected(
                        "a CUDA device for time='cuda'",
                        f"none: {no_cuda_reason()}; or use time='host'",
                        where="time",
                    )
                )
            self._cuda()
        self.path = target
        self.time = time
        self.values = names["values"]
        self.strides = names["strides"]
        self.flush_every = flush_every
        self.calls = 0
        self._mode = "a" if append else "w"
        self._buffer: list[str] = []
        self._pending: list[tuple[str, Any, Any]] = []  # (line head, start event, end event)
        self._lock = threading.Lock()
        self._active = True
        self._tensors: dict[Any, str] = {}  # (shape, dtype) -> tensor JSON without values
        self._keys: dict[str, str] = {}  # keyword name -> JSON key
        # The names of values= and strides= no recorded call has had yet, and, while any
        # is left, the argument names the calls had: a typo (cache_seqlen) would otherwise
        # record nothing extra without a word (see _warn_unmatched).
        self._awaited = set(self.values | self.strides)
        self._arg_names: dict[str, None] = {}  # in the order first seen
        # The named parameters of each recorded function that had a call: a values= name
        # among them left at its default in every call is no typo (see _warn_unmatched).
        self._declared: set[frozenset[str]] = set()
        self._warned = False
        atexit.register(self._at_exit)

    # -- wrapping ----------------------------------------------------------------------

    @overload
    def __call__(self, fn: F, *, op: str | None = None) -> F: ...

    @overload
    def __call__(self, fn: None = None, *, op: str | None = None) -> Callable[[F], F]: ...

    def __call__(self, fn: F | None = None, *, op: str | None = None) -> F | Callable[[F], F]:
        """Decorate ``fn`` (``@recorder`` or ``@recorder(op="name")``).

        The decorated function keeps its signature and return type for type checkers.
        """
        if fn is None:
            _check_op(op)  # at decoration time, not at the first call

            def decorate(f: F) -> F:
                return self.wrap(f, op=op)

            return decorate
        return self.wrap(fn, op=op)

    def wrap(self, fn: F, *, op: str | None = None) -> F:
        """Return ``fn`` wrapped so that each call is recorded.

        The wrapper keeps ``fn``'s name, docstring and signature (``functools.wraps``) and
        returns what ``fn`` returns. Calls made while the recorder is paused are passed
        through unrecorded.

        Parameters
        ----------
        fn : callable
            The function to record, typically the one that launches a kernel. Positional
            arguments are recorded under the names of its signature.
        op : str, optional
            The op name each call is recorded under; ``fn``'s qualified name if ``None``.

        Returns
        -------
        callable
            The recording wrapper.

        Raises
        ------
        InputError
            If ``fn`` is not callable, or ``op`` is empty, too long or holds control
            characters.
        """
        if not callable(fn):
            raise InputError(expected("a function to record", type(fn).__name__, where="fn"))
        _check_op(op)
        name = op or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "call")
        head = f'{{"op":{json.dumps(name)},"args":{{'
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # builtins without a signature
            params = []
        positional = [
            json.dumps(p.name)
            for p in params
            if p.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        # *args and **kwargs name no argument a call can pass by that name.
        declared = frozenset(p.name for p in params if p.kind not in _VARIADIC)
        recorder = self
        timing = self.time

        @functools.wraps(fn)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if not recorder._active:
                return fn(*args, **kwargs)
            parts = recorder._encode_args(positional, args, kwargs, declared)
            if timing == "host":
                start = _time.perf_counter_ns()
                result = fn(*args, **kwargs)
                elapsed = (_time.perf_counter_ns() - start) / 1000.0
                recorder._emit(f'{head}{parts}}},"duration_us":{elapsed:.3f}}}\n')
            elif timing == "cuda":
                torch = recorder._cuda()
                begin = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                begin.record()
                result = fn(*args, **kwargs)
                end.record()
                recorder._emit_pending(f"{head}{parts}}}", begin, end)
            else:
                result = fn(*args, **kwargs)
                recorder._emit(f"{head}{parts}}}}}\n")
            return result

        return recorded  # type: ignore[return-value]

    @contextlib.contextmanager
    def patch(
        self, owner: object, name: str, *, op: str | None = None
    ) -> Iterator[Callable[..., Any]]:
        """Replace ``owner.name`` by a recorded version for the length of the block.

        The original is restored on exit, even on errors, and the recorder is flushed.

        Parameters
        ----------
        owner : object
            The module, class or object holding the function.
        name : str
            The attribute of ``owner`` to wrap.
        op : str, optional
            The op name each call is recorded under; ``name`` if ``None``.

        Yields
        ------
        callable
            The wrapped function, also set as ``owner.name`` inside the block.

        Raises
        ------
        InputError
            If ``name`` is not a string naming an attribute of ``owner``, that attribute is
            not callable, or ``op`` is not a valid op name.
        """
        if not isinstance(name, str) or not hasattr(owner, name):
            # A raw AttributeError from deep inside would not say what was being patched.
            raise InputError(expected(f"an attribute of {owner!r} to patch", repr(name)))
        # What the owner holds itself, restored as it was: an attribute found through the
        # class (a method, an inherited function) is deleted again, not copied onto owner.
        own = (
            vars(owner).get(name, _NOT_OWN) if hasattr(owner, "__dict__") else getattr(owner, name)
        )
        raw = inspect.getattr_static(owner, name) if isinstance(owner, type) else None
        replacement: Any
        if isinstance(raw, (staticmethod, classmethod)):
            # Kept a descriptor of the same kind, or the call would bind the instance or
            # class as its first argument (torch.autograd.Function.forward is static).
            replacement = type(raw)(self.wrap(raw.__func__, op=op or name))
        else:
            replacement = self.wrap(getattr(owner, name), op=op or name)
        setattr(owner, name, replacement)
        try:
            yield getattr(owner, name)
        finally:
            if own is _NOT_OWN:
                delattr(owner, name)
            else:
                setattr(owner, name, own)
            self.flush()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Calls made inside the block are not recorded."""
        previous, self._active = self._active, False
        try:
            yield
        finally:
            self._active = previous

    def __enter__(self) -> Recorder:
        self._active = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.flush()
        if exc is None:
            # Under -W error the warning would replace the block's own error: a block
            # that failed is warned about at exit instead.
            self._warn_unmatched()

    # -- manual recording ----------------------------------------------------------------

    def record(self, op: str, args: Mapping[str, Any], duration_us: float | None = None) -> None:
        """Record one call by hand (what a wrapped function does for you).

        Parameters
        ----------
        op : str
            The op name.
        args : mapping of str to object
            Argument name → value, encoded as a wrapped function's arguments are.
        duration_us : float, optional
            The call's duration in microseconds, a real number in ``[0, 1e12]`` (the
            bounds the trace reader accepts).

        Raises
        ------
        InputError
            If ``op`` is not a valid op name, ``args`` is not a mapping of str names, or
            ``duration_us`` is not a number in ``[0, 1e12]``.
        """
        _check_op(op, optional=False)
        if not isinstance(args, Mapping):
            raise InputError(expected("args as a mapping of name to value", type(args).__name__))
        if not all(isinstance(key, str) for key in args):
            raise InputError(expected("argument names (strings)", list(args), where="args"))
        parts = self._encode_args([], (), args)
        line = f'{{"op":{json.dumps(op)},"args":{{{parts}}}'
        if duration_us is not None:
            # The trace reader's own bounds: a call recorded outside them would be written
            # and then skipped as malformed when read. Any real number (numpy's too).
            number = finite_float(duration_us)
            if number is None or not 0 <= number <= MAX_DURATION_US:
                got: object = duration_us
                if isinstance(duration_us, int) and abs(duration_us) >= _FLOAT_SAFE_INT:
                    # repr() of an int over 4300 digits raises instead of showing it.
                    got = f"an int of {duration_us.bit_length()} bits"
                raise InputError(expected("a duration in [0, 1e12] us", got, where="duration_us"))
            line += f',"duration_us":{number:.3f}'
        self._emit(line + "}\n")

    # -- encoding ------------------------------------------------------------------------

    def _encode_args(
        self,
        positional: list[str],
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
        declared: frozenset[str] = frozenset(),
    ) -> str:
        if self._awaited:  # empty once every name has been seen: no cost per call then
            self._see_names(positional, len(args), kwargs)
            self._declared.add(declared)  # a frozenset keeps its hash: one lookup per call
        parts = []
        encode = self._encode
        for i, value in enumerate(args):
            text = encode(positional[i] if i < len(positional) else f'"arg{i}"', value)
            if text is not None:
                parts.append(text)
        for name, value in kwargs.items():
            key = self._keys.get(name)
            if key is None:
                _check_name("argument name", name, "args")  # once per name: as the reader
                key = self._keys[name] = json.dumps(name)
            text = encode(key, value)
            if text is not None:
                parts.append(text)
        return ",".join(parts)

    def _see_names(self, positional: list[str], count: int, kwargs: Mapping[str, Any]) -> None:
        """Note the argument names of one call: ``count`` positional ones (named as
        :meth:`_encode_args` names them) and the keywords."""
        names = [positional[i][1:-1] if i < len(positional) else f"arg{i}" for i in range(count)]
        for name in (*names, *kwargs):
            self._arg_names.setdefault(name, None)
            self._awaited.discard(name)

    def _unmatched(self) -> set[str]:
        """The names of ``values=`` and ``strides=`` no recorded call had and no recorded
        function has as a parameter: a parameter left at its default in every call (lengths
        of None in a decode loop) was never given a value, it is no typo."""
        declared = frozenset().union(*self._declared)
        return self._awaited - declared

    def _warn_unmatched(self) -> None:
        """Say once, in a :class:`RecorderWarning`, which names of ``values=`` and
        ``strides=`` no recorded call had, and the argument names the calls had."""
        if self._warned or not self._awaited or not self.calls:
            return
        unmatched = self._unmatched()
        if not unmatched:
            return
        self._warned = True
        seen = list(self._arg_names)
        parts = [
            _unmatched_message(option, missing, seen, self.calls)
            for option, names in (("values", self.values), ("strides", self.strides))
            if (missing := names & unmatched)
        ]
        warnings.warn(f"{self.path}: " + "; ".join(parts), RecorderWarning, stacklevel=3)

    def _at_exit(self) -> None:
        """Flush at the program's exit; the end of recording for a recorder never closed."""
        self.flush()
        self._warn_unmatched()

    def _encode(self, key: str, value: Any) -> str | None:
        # The hot path of every recorded call: exact type checks first, JSON encoding only
        # for strings, and tensor text cached per (shape, dtype).
        kind = type(value)
        if kind is int:
            if -_FLOAT_SAFE_INT < value < _FLOAT_SAFE_INT:
                return f"{key}:{value}"
            return self._encode(key, _huge_int(value))
        if kind is bool or value is None:
            return f"{key}:{_SCALARS[value]}"
        if kind is float:
            return f"{key}:{value!r}" if math.isfinite(value) else f"{key}:{json.dumps(str(value))}"
        if kind is str:
            if _SURROGATE.search(value):
                # Written as a \\ud800 escape, read back as a string no UTF-8 file holds:
                # the reader skips the call.
                _check_encodable("string", value, f"args.{key[1:-1]}")
            return f"{key}:{json.dumps(value)}"
        shape = getattr(value, "shape", None)
        if shape is not None and hasattr(value, "dtype"):
            if not shape and _is_numpy_scalar(value):
                # np.int64(16) has a shape and a dtype too, but it is the number a kernel
                # reads as k or a scale, not a tensor.
                return self._encode(key, value.item())
            return f"{key}:{self._tensor(key, value, shape)}"
        if isinstance(value, (int, float, str)):  # subclasses (numpy scalars, enums)
            return self._encode(key, _plain(value))
        if isinstance(value, (list, tuple)) and value:
            if any(_is_numpy_scalar(v) for v in value):
                # dim=[np.int64(1)] holds the number 1, as k=np.int64(16) holds 16: not a
                # list of 0-d tensors, nor an argument to leave out.
                value = [v.item() if _is_numpy_scalar(v) else v for v in value]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                if all(finite_float(v) is not None for v in value):
                    return f"{key}:[{','.join(json.dumps(_plain(v)) for v in value)}]"
            elif all(getattr(v, "shape", None) is not None and hasattr(v, "dtype") for v in value):
                inner = ",".join(self._tensor(key, v, v.shape) for v in value)
                return f"{key}:[{inner}]"
        return None  # objects that carry no shape information are left out

    def _tensor(self, key: str, value: Any, shape: Any) -> str:
        dtype = value.dtype
        try:
            cache_key = (tuple(shape), dtype)
            text = self._tensors.get(cache_key)
        except TypeError:  # an unhashable dtype object
            cache_key, text = None, None
        if text is None:
            written = str(dtype)
            name = canonical_dtype(written)
            if name is None:  # an unknown dtype is kept as written, where the reader can
                name = written
                _check_name("dtype", written, f"args.{key[1:-1]}.dtype")
            text = f'{{"shape":[{_dims(shape, key[1:-1])}],"dtype":{json.dumps(name)}'
            if cache_key is not None and len(self._tensors) < 4096:
                self._tensors[cache_key] = text
        if key[1:-1] in self.strides:
            stride = _strides(value)
            if stride is not None and len(stride) == len(tuple(shape)):
                text = f'{text},"stride":[{",".join(str(s) for s in stride)}]'
        if key[1:-1] in self.values:
            summary = self._summary(value)
            if summary is not None:
                return f'{text},"values":{summary}}}'
        return text + "}"

    @staticmethod
    def _summary(value: Any) -> str | None:
        stats = _stats(value)
        if stats is None or not all(math.isfinite(v) for v in stats[:3]):
            return None  # empty tensors, exotic types: no summary rather than no record
        low, high, mean, std = stats
        mean = min(max(round(mean, 3), low), high)
        summary = {"min": low, "max": high, "mean": mean}
        if math.isfinite(std):
            # The spread of the lengths in one batch (population std): what catalog
            # conditions on seqlen_cv compare; min, max and mean do not give it.
            summary["std"] = min(round(std, 3), (high - low) / 2)
        return json.dumps(summary, separators=(",", ":"))

    # -- output --------------------------------------------------------------------------

    def _cuda(self) -> Any:
        if self._torch is None:
            import torch  # only time="cuda" needs torch

            self._torch = torch
        return self._torch

    def _emit(self, line: str) -> None:
        self._buffer.append(line)
        self.calls += 1
        if len(self._buffer) >= self.flush_every:
            self.flush()

    def _emit_pending(self, head: str, begin: Any, end: Any) -> None:
        self._pending.append((head, begin, end))
        self.calls += 1
        if len(self._pending) >= self.flush_every:
            self.flush()

    def _resolve_pending(self) -> None:
        if not self._pending:
            return
        # Calls of other threads may be appended meanwhile (recording takes no lock): take
        # out only the first n, the ones resolved here.
        n = len(self._pending)
        self._pending[n - 1][2].synchronize()  # events complete in order on one stream
        for head, begin, end in self._pending[:n]:
            elapsed = begin.elapsed_time(end) * 1000.0  # ms -> us
            self._buffer.append(f'{head},"duration_us":{elapsed:.3f}}}\n')
        del self._pending[:n]

    def flush(self) -> None:
        """Write the buffered calls to the file."""
        with self._lock:
            self._resolve_pending()
            if not self._buffer:
                if self._mode == "w":
                    # append=False starts the file afresh even where no call was recorded:
                    # the previous run's calls, kept, would be read as this run's.
                    self._start_afresh()
                return
            # Lines that other threads append while these are joined stay for the next
            # flush (recording takes no lock): remove only the n lines written here.
            n = len(self._buffer)
            text = "".join(self._buffer[:n])
            try:
                self._write(text)
            except OSError as error:
                # The lines stay buffered, so that a flush once the cause is gone (a full
                # disk, a folder moved away) still writes them.
                raise InputError(
                    expected(
                        "a file the recorded calls can be written to",
                        f"{self.path} ({_reason(self.path, error)}); "
                        f"{n} call{'s' * (n != 1)} kept for the next flush",
                        where="path",
                    )
                ) from None
            del self._buffer[:n]
            self._mode = "a"

    def _start_afresh(self) -> None:
        """Empty the file left by an earlier run (no file is created where none is)."""
        try:
            if self.path.is_file():
                os.truncate(self.path, 0)
        except OSError as error:
            raise InputError(
                expected(
                    "a file that can be started afresh (append=False)",
                    f"{self.path} ({_reason(self.path, error)})",
                    where="path",
                )
            ) from None
        self._mode = "a"

    def _write(self, text: str) -> None:
        """Write ``text`` to the file; on a failed write, leave the file as it was."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        size = None
        if self._mode == "a":
            if _ends_mid_line(self.path):
                text = "\n" + text  # the cut line stays malformed; the first new one is kept
            with contextlib.suppress(OSError):
                size = self.path.stat().st_size if self.path.is_file() else None
        try:
            with open(self.path, self._mode, encoding="utf-8") as handle:
                handle.write(text)
        except OSError:
            # Part of the text may have reached the file: cut it off again, or the retry
            # would write those calls a second time.
            if size is not None:
                with contextlib.suppress(OSError):
                    os.truncate(self.path, size)
            raise

    def close(self) -> None:
        """Flush; the recorder can still be used afterwards (it appends).

        The end of recording: where a name given to ``values=`` or ``strides=`` matched
        no argument of any call recorded so far, a :class:`RecorderWarning` says so (once
        per recorder), naming the argument names the calls had.
        """
        self.flush()
        self._warn_unmatched()
