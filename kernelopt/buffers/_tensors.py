"""Torch helpers the buffer modules share: key normalization and storage identity.

The pool's hit path runs on every kernel call, so the normalizers here return early for
the common spellings (a ``torch.device`` or a cached device string, a plain tuple shape)
and leave full validation to the miss path, which runs once per buffer.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn, Protocol, TypeAlias

import torch

from kernelopt._errors import DeviceError, InputError, KernelOptError, expected

__all__ = [
    "DeviceLike",
    "ShapeLike",
    "StreamLike",
    "byte_span",
    "device_and_stream",
    "nbytes_of",
    "normalize_device",
    "normalize_shape",
    "same_device",
    "spans_meet",
    "storage_ptr",
    "storage_refs",
    "storage_refs_or_none",
    "stream_id",
    "validate_dtype",
    "validate_shape",
]


class _HasStreamId(Protocol):
    @property
    def stream_id(self) -> int: ...


ShapeLike: TypeAlias = int | Sequence[int]
DeviceLike: TypeAlias = torch.device | str | int
StreamLike: TypeAlias = int | _HasStreamId | None

# Device spellings that always mean the same device; "cuda" without an index is not one
# of them (it follows torch.cuda.current_device()), so it is resolved on every call.
_DEVICES: dict[object, torch.device] = {}

# The CUDA index of each cached spelling (-1 off CUDA), read on every pool request.
_CUDA_INDEX: dict[object, int] = {}

# torch.cuda.current_stream() builds a Stream object on every call; the
# binding underneath returns the stream id directly. Fall back to the public call if a
# torch build lacks it.
_CUDA_CURRENT_STREAM: Callable[[int], tuple[int, int, int]] | None = getattr(
    torch._C, "_cuda_getCurrentStream", None
)
_STORAGE_USE_COUNT: Callable[[int], int] | None = getattr(torch._C, "_storage_Use_Count", None)


# Collections with a length and indexing that are still no shape. Sequences without
# collections.abc registration (numpy arrays, 1-d tensors) pass by length and indexing.
_NOT_SHAPES = (Mapping, str, bytes, bytearray)


def normalize_shape(shape: ShapeLike) -> tuple[int, ...]:
    """Return ``shape`` as a plain tuple (no validation; see :func:`validate_shape`).

    Raises
    ------
    InputError
        If ``shape`` is neither an int nor a sequence: a dict, a set, an iterator or a
        str is refused, though ``tuple()`` would read one ({2: 3} as (2,)).
    """
    if type(shape) is tuple:
        return shape
    if isinstance(shape, (tuple, list)):  # torch.Size, the common spellings
        return tuple(shape)
    if isinstance(shape, int):  # a bool too: validate_shape refuses it
        return (shape,)
    if isinstance(shape, numbers.Integral):  # np.int64(3)
        return (int(shape),)
    if isinstance(shape, _NOT_SHAPES) or not (
        hasattr(shape, "__len__") and hasattr(shape, "__getitem__")
    ):
        if not hasattr(shape, "__iter__"):  # 2.0, None: not even a collection
            raise InputError(expected("a shape of non-negative ints", repr(shape), where="shape"))
        # Unordered (a set, a dict's keys), a one-shot iterator, or text: tuple() would
        # make a shape of it that the caller never wrote.
        raise InputError(
            expected("a shape (a sequence of ints)", type(shape).__name__, where="shape")
        )
    try:
        return tuple(shape)
    except TypeError:  # a 0-d array or tensor: no sequence of sizes
        raise InputError(
            expected("a shape of non-negative ints", repr(shape), where="shape")
        ) from None


# torch stores each size as a signed 64-bit int.
_MAX_DIM = 2**63 - 1


def validate_shape(shape: tuple[object, ...], *, where: str = "shape") -> tuple[int, ...]:
    """Check that every entry of ``shape`` is an integer in [0, 2**63 - 1]; return it as ints.

    Any integer type with ``__index__`` passes (``np.int64`` included); a bool does not,
    though Python reads ``True`` as 1.
    """
    try:
        dims = tuple(
            # True is 1 to Python, not a size: the -1 is reported below.
            -1 if isinstance(d, bool) else operator.index(d)  # type: ignore[arg-type]
            for d in shape
        )
    except TypeError:
        dims = (-1,)  # reported below
    if any(d < 0 for d in dims):
        raise InputError(expected("a shape of non-negative ints", repr(shape), where=where))
    if any(d > _MAX_DIM for d in dims):
        # A zero-size shape passes the byte limit whatever its other dims; torch cannot
        # hold such a dim, and its own error is a TypeError with C++ frames.
        raise InputError(expected("dims of at most 2**63 - 1", repr(shape), where=where))
    return dims


def validate_dtype(dtype: object, *, where: str = "dtype") -> torch.dtype:
    """Check that ``dtype`` is a ``torch.dtype`` (a string such as ``"float32"`` is not)."""
    if not isinstance(dtype, torch.dtype):
        raise InputError(expected("a torch.dtype", repr(dtype), where=where))
    return dtype


def normalize_device(device: DeviceLike) -> torch.device:
    """Return ``device`` as a ``torch.device``; a bare ``"cuda"`` gets the current index."""
    try:
        found = _DEVICES.get(device)
    except TypeError:  # an unhashable spelling (a list): refused below
        found = None
    if found is not None:
        return found
    if isinstance(device, torch.device):
        parsed = device
    elif isinstance(device, (str, int)) and not isinstance(device, bool):
        try:
            parsed = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            if isinstance(device, int) and device >= 0 and not torch.cuda.is_available():
                # torch reads a bare index as the accelerator's and finds none ("Cannot
                # access accelerator device"): the spelling is right, the GPU is missing.
                _refuse_missing_cuda(device)
            raise InputError(
                expected("a torch device such as 'cpu' or 'cuda:0'", repr(device), where="device")
            ) from None
    else:
        raise InputError(
            expected("a torch device such as 'cpu' or 'cuda:0'", repr(device), where="device")
        )
    if parsed.type == "cpu" and parsed.index is not None:
        # torch places a tensor made on "cpu:0" on "cpu": key and check it the same way.
        parsed = torch.device("cpu")
    if parsed.type == "cuda":
        # The stream query on the hot path skips torch.cuda's lazy initialization, so
        # do it here, where each CUDA spelling passes before it is cached.
        if not torch.cuda.is_available():
            _refuse_missing_cuda(device)
        torch.cuda.init()  # type: ignore[no-untyped-call]
        if parsed.index is None:
            # Tensors always report an index, so the key must carry one to match them.
            return torch.device("cuda", torch.cuda.current_device())
    elif parsed.type not in ("cpu", "meta"):
        _refuse_unusable(device, parsed)
    _DEVICES[device] = parsed
    return parsed


def _refuse_missing_cuda(device: DeviceLike) -> NoReturn:
    """Raise the DeviceError for a CUDA ``device`` where torch sees none, saying why."""
    # Imported here: kernelopt.buffers does not load kernelopt.bench at import time.
    from kernelopt.bench.timer import no_cuda_reason

    raise DeviceError(expected(f"a CUDA device for {device!r}", f"none: {no_cuda_reason()}"))


def _refuse_unusable(device: DeviceLike, parsed: torch.device) -> None:
    """Raise a DeviceError if this torch build cannot allocate on ``parsed`` (``"mps"`` on
    Linux, ``"xpu"`` on a build without it); run once per spelling, before it is cached.

    Without this, the first buffer's ``torch.empty`` failed with the backend's own
    NotImplementedError, AssertionError or ModuleNotFoundError, naming no argument.
    """
    try:
        torch.empty(0, device=parsed)
    except Exception as error:  # each backend fails in its own type; all mean "not here"
        # The first sentence: the dispatcher's goes on to list every backend it knows.
        lines = str(error).strip().splitlines()
        first = lines[0].split(". ")[0][:200] if lines else ""
        cause = f"{type(error).__name__}: {first}" if first else type(error).__name__
        raise DeviceError(
            expected(
                f"a device this torch build can allocate on for {device!r}",
                f"none: torch {torch.__version__} cannot allocate on {parsed.type} ({cause})",
            )
        ) from None


def device_and_stream(device: DeviceLike, stream: StreamLike) -> tuple[torch.device, int]:
    """The normalized device and the stream id for a pool key, in one call (the hot path).

    Parameters
    ----------
    device : torch.device, str or int
        As for :func:`normalize_device`.
    stream : int, torch.cuda.Stream or None
        A stream id or object (a bool is neither: ``InputError``); None means the
        current stream of ``device`` (0 off CUDA).
    """
    try:
        cuda_index = _CUDA_INDEX.get(device)
    except TypeError:  # an unhashable spelling: normalize_device refuses it
        cuda_index = None
    if cuda_index is None:
        dev = normalize_device(device)
        cuda_index = dev.index if dev.type == "cuda" and dev.index is not None else -1
        if device in _DEVICES:  # a spelling with a fixed meaning: remember its index
            _CUDA_INDEX[device] = cuda_index
    else:
        dev = _DEVICES[device]
    if stream is not None:
        if isinstance(stream, int) and not isinstance(stream, bool):
            return dev, stream
        return dev, _stream_object_id(stream)
    if cuda_index < 0:
        return dev, 0
    return dev, _current_cuda_stream(cuda_index)


def _stream_object_id(stream: object) -> int:
    """The id of a stream object (anything with ``stream_id``, as torch.cuda.Stream).

    A bool comes here too, though Python reads ``True`` as 1: it has no ``stream_id``,
    so it is refused rather than keyed as stream 1.
    """
    try:
        return int(stream.stream_id)  # type: ignore[attr-defined]
    except (AttributeError, TypeError, ValueError):
        raise InputError(
            expected(
                "a stream id (int), a stream object with stream_id, or None",
                repr(stream),
                where="stream",
            )
        ) from None


def _current_cuda_stream(index: int) -> int:
    if _CUDA_CURRENT_STREAM is not None:
        return _CUDA_CURRENT_STREAM(index)[0]
    return int(torch.cuda.current_stream(index).stream_id)


def same_device(actual: torch.device, wanted: torch.device) -> bool:
    """Whether a tensor on ``actual`` lives on ``wanted`` (an index-free ``wanted`` matches any)."""
    if actual.type != wanted.type:
        return False
    return wanted.index is None or actual.index == wanted.index


def stream_id(device: torch.device, stream: StreamLike) -> int:
    """The id of ``stream`` (or of the current stream of ``device``); 0 off CUDA."""
    if stream is not None:
        if isinstance(stream, int) and not isinstance(stream, bool):
            return stream
        return _stream_object_id(stream)
    if device.type != "cuda":
        return 0
    return _current_cuda_stream(device.index if device.index is not None else -1)


# torch sizes storage in signed 64-bit bytes; a larger request overflows inside torch.empty.
_MAX_BYTES = 2**63 - 1


def nbytes_of(shape: tuple[int, ...], dtype: torch.dtype) -> int:
    """Bytes of a contiguous tensor of ``shape`` and ``dtype``.

    Raises
    ------
    InputError
        When that is more than torch can address (2**63 - 1 bytes).
    """
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > _MAX_BYTES:
        raise InputError(
            expected(
                "a shape of at most 2**63 - 1 bytes",
                f"{shape} of {dtype} ({nbytes} bytes)",
                where="shape",
            )
        )
    return nbytes


def storage_ptr(tensor: torch.Tensor) -> int:
    """Address of the storage under ``tensor`` (shared by all its views; 0 for meta)."""
    return int(tensor.untyped_storage().data_ptr())


def storage_refs_or_none(tensor: torch.Tensor) -> int | None:
    """:func:`storage_refs`, or None where this torch build cannot count references."""
    if _STORAGE_USE_COUNT is None or tensor.device.type == "meta":
        return None
    return _STORAGE_USE_COUNT(tensor.untyped_storage()._cdata)


def storage_refs(tensor: torch.Tensor) -> int:
    """How many tensors (views included) reference the storage under ``tensor``.

    Only differences matter: callers compare with a count taken by this same function
    right after allocation, so the constant the measurement itself adds cancels out. A
    storage object kept on its own (``untyped_storage()``) is no tensor and is not
    counted: torch keeps one Python object per storage, holding one reference however
    many names hold it, and Python's own count of that object moves with torch's
    internal caching, so it cannot tell a caller's reference apart.
    """
    if _STORAGE_USE_COUNT is None:
        raise KernelOptError(
            expected(
                "a torch build with torch._C._storage_Use_Count for alias checks",
                f"torch {torch.__version__} without it; use on_return='copy' or 'unchecked'",
            )
        )
    return _STORAGE_USE_COUNT(tensor.untyped_storage()._cdata)


def byte_span(tensor: torch.Tensor) -> tuple[int, int] | None:
    """Addresses ``[first, last + 1)`` of the bytes ``tensor``'s elements occupy; None for
    a tensor that occupies none (empty, or on the meta device).

    Whole spans, not elements: two tensors whose spans meet are taken to share memory
    (a view of one starts elsewhere and still overlaps it; a tensor strided across the
    other's bytes meets them even where no element does), while a disjoint slice of the
    same storage does not.
    """
    if tensor.numel() == 0 or tensor.device.type == "meta":
        return None
    size = tensor.element_size()
    start = tensor.data_ptr()
    if tensor.is_contiguous():  # the common case on every launch: no stride walk
        return start, start + tensor.numel() * size
    low = high = 0
    for stride, extent in zip(tensor.stride(), tensor.shape, strict=True):
        reach = stride * (extent - 1)
        low, high = (low + reach, high) if reach < 0 else (low, high + reach)
    return start + low * size, start + (high + 1) * size


def spans_meet(one: tuple[int, int] | None, other: tuple[int, int] | None) -> bool:
    """Whether two :func:`byte_span` results share a byte (None shares none)."""
    return one is not None and other is not None and one[0] < other[1] and other[0] < one[1]
