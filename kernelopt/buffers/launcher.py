"""``@persistent_buffers``: give a kernel launcher a scope of buffers that outlive the call.

The decorated function takes a :class:`~kernelopt.buffers.BufferScope` as its first
argument; callers call it without one. Each launcher gets its own scope (named after
the function), so its workspaces and outputs persist across calls and nobody else's
requests can overwrite them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Concatenate, Generic, Literal, ParamSpec, TypeVar, overload

from kernelopt._errors import InputError, expected
from kernelopt.buffers.pool import BufferPool
from kernelopt.buffers.scope import BufferScope

__all__ = ["OnReturn", "PersistentLauncher", "persistent_buffers"]

P = ParamSpec("P")
R = TypeVar("R")

OnReturn = Literal["check", "copy", "unchecked"]
_ON_RETURN: tuple[str, ...] = ("check", "copy", "unchecked")


class PersistentLauncher(Generic[P, R]):
    """A launcher with persistent buffers; call it like the function without its scope.

    Its signature (``inspect.signature``) is ``fn``'s without the scope parameter, and a
    launcher whose scope is closed refuses every call.

    Parameters
    ----------
    fn : callable
        ``fn(scope, *args, **kwargs)``: the launcher, taking its scope first.
    scope : BufferScope
        The scope whose buffers persist across calls.
    on_return : {"check", "copy", "unchecked"}
        What happens to the scope's buffers that a call returns (outputs taken from the
        scope): ``"check"`` hands them out and raises on a later call that would
        overwrite one the caller still references; ``"copy"`` returns clones (safe,
        costs an allocation and a copy per call); ``"unchecked"`` returns them as they
        are (the caller promises to be done with a result before the next call, as with
        CUDA-graph static outputs).
    """

    def __init__(
        self,
        fn: Callable[Concatenate[BufferScope, P], R],
        *,
        scope: BufferScope,
        on_return: OnReturn = "check",
    ) -> None:
        if on_return not in _ON_RETURN:
            raise InputError(expected(f"on_return in {_ON_RETURN}", repr(on_return)))
        self._fn = fn
        self._scope = scope
        self._on_return: OnReturn = on_return
        self._copy = on_return == "copy"
        self._track = on_return != "unchecked"
        functools.update_wrapper(self, fn)
        signature = _signature_without_scope(fn)
        if signature is not None:
            # Without it, inspect.signature follows __wrapped__ to fn and lists the scope
            # as the first argument: tools that bind or record arguments by name would
            # shift every name by one.
            self.__signature__ = signature

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._scope._closed:
            # A call given out= may take nothing from the scope, and would otherwise
            # run on a launcher that close() or a redefinition retired.
            self._scope._refuse_closed()
        result = self._fn(self._scope, *args, **kwargs)
        if self._track:
            return self._scope._settle(result, copy=self._copy)
        return result

    def call_with_scope(self, scope: BufferScope, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run the launcher on another scope's buffers, returning them untracked.

        :func:`~kernelopt.buffers.capture_graph` uses this to give a graph buffers of
        its own, which eager calls can neither evict nor overwrite.

        Parameters
        ----------
        scope : BufferScope
            The scope the launcher takes its buffers from for this call, in place of
            :attr:`scope`.
        *args, **kwargs
            The launcher's own arguments, as for a plain call.

        Returns
        -------
        R
            What the launcher returns, as is: ``on_return`` does not apply (no check
            and no copy).
        """
        return self._fn(scope, *args, **kwargs)

    @property
    def scope(self) -> BufferScope:
        """The scope holding this launcher's persistent buffers."""
        return self._scope

    @property
    def pool(self) -> BufferPool:
        """The pool the scope's buffers live in."""
        return self._scope.pool

    @property
    def on_return(self) -> OnReturn:
        """The policy for returned buffers: ``"check"``, ``"copy"`` or ``"unchecked"``."""
        return self._on_return

    def clear(self) -> None:
        """Free this launcher's persistent buffers (the next call allocates afresh)."""
        self._scope.clear()

    def close(self) -> None:
        """Drop the launcher's buffers and give its scope name back (see
        :meth:`BufferScope.close`); the launcher cannot be called afterwards."""
        self._scope.close()

    def __repr__(self) -> str:
        return f"<persistent launcher {self._scope.name} on_return={self._on_return!r}>"


def _signature_without_scope(fn: Callable[..., object]) -> inspect.Signature | None:
    """``fn``'s signature less its first (scope) parameter; None if it has none to read."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or an extension without one
        return None
    params = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if params and params[0].kind in positional:
        params = params[1:]
    elif not params or params[0].kind is not inspect.Parameter.VAR_POSITIONAL:
        # Every call passes the scope first: such a launcher failed on its first call with
        # "takes 0 positional arguments but 1 was given", though the caller passed none.
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        raise InputError(
            expected(
                "a launcher taking its BufferScope as the first positional parameter",
                f"{name}{signature}",
                where="fn",
            )
        )
    return signature.replace(parameters=params)


@overload
def persistent_buffers(
    fn: Callable[Concatenate[BufferScope, P], R], /
) -> PersistentLauncher[P, R]: ...


@overload
def persistent_buffers(
    *,
    pool: BufferPool | None = None,
    name: str | None = None,
    on_return: OnReturn = "check",
) -> Callable[[Callable[Concatenate[BufferScope, P], R]], PersistentLauncher[P, R]]: ...


def persistent_buffers(
    fn: Callable[Concatenate[BufferScope, P], R] | None = None,
    /,
    *,
    pool: BufferPool | None = None,
    name: str | None = None,
    on_return: OnReturn = "check",
) -> (
    PersistentLauncher[P, R]
    | Callable[[Callable[Concatenate[BufferScope, P], R]], PersistentLauncher[P, R]]
):
    """Decorate a launcher so that its workspaces and outputs persist across calls.

    The function receives a :class:`~kernelopt.buffers.BufferScope` as its first
    argument; ``scope.empty(name, shape, dtype, device)`` returns the same tensor while
    the key is unchanged. Persist a buffer only if every call rewrites every element it
    reads (check with :func:`~kernelopt.buffers.check_no_stale_reads`).

    Parameters
    ----------
    fn : callable, optional
        The launcher ``fn(scope, *args, **kwargs)``; given when used as ``@persistent_buffers``.
    pool : BufferPool, optional
        Where the buffers live; defaults to :func:`~kernelopt.buffers.default_pool`.
    name : str, optional
        The scope's name; defaults to ``module.qualname`` of ``fn`` (with ``#2``, ``#3``...
        appended if that is taken, e.g. by launchers a factory builds). An explicit name
        taken by another function's launcher raises ``InputError``; taken by a launcher of
        the same ``module.qualname`` (a notebook cell or module run again), the old
        launcher is closed and the name passes to the new one. A launcher that is
        garbage-collected gives its name and buffers back.
    on_return : {"check", "copy", "unchecked"}
        The policy for returned scope buffers; see :class:`PersistentLauncher`.

    Returns
    -------
    PersistentLauncher
        Callable as ``launcher(*args, **kwargs)``; exposes ``scope``, ``pool``, ``clear()``.

    Raises
    ------
    InputError
        If ``fn`` is not callable or takes no positional first parameter for its scope,
        ``on_return`` is none of the three, ``pool`` is not a :class:`BufferPool`, or
        ``name`` is empty, holds ``/`` or is held by another function's launcher.

    Examples
    --------
    >>> import torch
    >>> from kernelopt.buffers import BufferPool, BufferScope, persistent_buffers
    >>> @persistent_buffers(pool=BufferPool())
    ... def scale(buffers: BufferScope, x: torch.Tensor, out: torch.Tensor | None = None):
    ...     out = buffers.resolve_out(out, x.shape, x.dtype, x.device)
    ...     return torch.mul(x, 2.0, out=out)
    >>> y = scale(torch.ones(3))
    >>> y.tolist()
    [2.0, 2.0, 2.0]
    >>> del y  # released: the next call may reuse the buffer
    >>> scale(torch.ones(3)).tolist()
    [2.0, 2.0, 2.0]
    """
    if on_return not in _ON_RETURN:
        raise InputError(expected(f"on_return in {_ON_RETURN}", repr(on_return)))

    def wrap(f: Callable[Concatenate[BufferScope, P], R]) -> PersistentLauncher[P, R]:
        if not callable(f):
            raise InputError(expected("a callable launcher", type(f).__name__))
        _signature_without_scope(f)  # refuse a launcher without a scope parameter first
        default = f"{getattr(f, '__module__', None) or 'launcher'}."
        default += getattr(f, "__qualname__", None) or type(f).__name__
        if name is None:
            scope = BufferScope._unique(default, pool=pool)
        else:
            scope = BufferScope._owned(name, pool=pool, owner=default)
        return PersistentLauncher(f, scope=scope, on_return=on_return)

    if fn is not None:
        return wrap(fn)
    return wrap
