"""``@persistent_buffers``: give a kernel launcher a scope of buffers that outlive the call.

The decorated function takes a :class:`~kernelopt.buffers.BufferScope` as its first
argument; callers call it without one. Each launcher gets its own scope (named after
the function), so its workspaces and outputs persist across calls and nobody else's
requests can overwrite them. A launcher defined in a class body is a method: each instance
gets a scope of its own (see :class:`BoundLauncher`).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import threading
import weakref
from collections.abc import Callable
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, cast, overload

from kernelopt._errors import InputError, expected
from kernelopt.buffers.pool import BufferPool
from kernelopt.buffers.scope import BufferScope

__all__ = ["BoundLauncher", "OnReturn", "PersistentLauncher", "persistent_buffers"]

P = ParamSpec("P")
R = TypeVar("R")

OnReturn = Literal["check", "copy", "unchecked"]
_ON_RETURN: tuple[str, ...] = ("check", "copy", "unchecked")


class PersistentLauncher(Generic[P, R]):
    """A launcher with persistent buffers; call it like the function without its scope.

    Its signature (``inspect.signature``) is ``fn``'s without the scope parameter, and a
    launcher whose scope is closed refuses every call.

    Defined in a class body, it is a method: ``obj.method`` is a :class:`BoundLauncher`
    that passes ``obj`` after the scope, and each instance gets a scope of its own
    (named ``"<scope>[<k>]"``, ``k`` counting instances from 0), freed with the instance.
    Layers of different shapes neither evict each other's buffers nor share one they both
    write within a step. ``Class.method(obj, ...)`` runs on ``obj``'s scope too.
    :meth:`clear` and :meth:`close` act on every instance's buffers.

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

    Raises
    ------
    InputError
        When ``fn`` is not callable, ``scope`` is not a BufferScope, or ``on_return`` is
        not one of its values.
    """

    def __init__(
        self,
        fn: Callable[Concatenate[BufferScope, P], R],
        *,
        scope: BufferScope,
        on_return: OnReturn = "check",
    ) -> None:
        # Checked here, not on the first call: a launcher built around None or a wrong
        # scope would fail later, inside a kernel's hot path, with Python's words.
        if not callable(fn):
            raise InputError(expected("a callable fn(scope, ...)", type(fn).__name__, where="fn"))
        if not isinstance(scope, BufferScope):
            raise InputError(expected("a BufferScope", type(scope).__name__, where="scope"))
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
        self._bound_signature = None if signature is None else _without_first(signature)
        # Set by __set_name__ when the launcher is defined in a class body.
        self._owner: type | None = None
        # id(instance) -> that instance's scope. Keyed by id, not by the instance: a
        # WeakKeyDictionary compares keys with ==, so two equal layers would share one.
        # A finalizer on the instance drops its entry, before its id can be reused.
        self._instances: dict[int, BufferScope] = {}
        self._instance_numbers = itertools.count()
        self._instance_lock = threading.Lock()
        # Whoever closes the scope (close(), or the launcher defined again under its
        # name) closes the instances' scopes too; the hook holds the dict, not self.
        scope._on_close = functools.partial(_close_all, self._instances)

    def __set_name__(self, owner: type, name: str) -> None:
        self._owner = owner

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> PersistentLauncher[P, R]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> BoundLauncher[R]: ...

    def __get__(
        self, instance: object | None, owner: type | None = None
    ) -> PersistentLauncher[P, R] | BoundLauncher[R]:
        """The launcher itself through the class; bound to ``instance`` through one."""
        if instance is None:
            return self
        # Every obj.method access makes one, as for a plain method: skip __init__.
        bound: BoundLauncher[R] = object.__new__(BoundLauncher)
        bound.__func__ = self
        bound.__self__ = instance
        return bound

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._scope.closed:
            # A call given out= may take nothing from the scope, and would otherwise
            # run on a launcher that close() or a redefinition retired.
            self._scope._refuse_closed()
        owner = self._owner
        if owner is not None and args and isinstance(args[0], owner):
            # Class.method(obj, x) is obj.method(x): it runs on obj's scope.
            positional = cast(tuple[Any, ...], args)
            return self._run(self._instance_scope(positional[0]), positional, kwargs)
        result = self._fn(self._scope, *args, **kwargs)
        if self._track:
            return self._scope._settle(result, copy=self._copy)
        return result

    def _run(self, scope: BufferScope, args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
        """``fn(scope, *args, **kwargs)`` with the ``on_return`` policy of ``scope``."""
        fn = cast(Callable[..., R], self._fn)
        result = fn(scope, *args, **kwargs)
        if self._track:
            return scope._settle(result, copy=self._copy)
        return result

    def _instance_scope(self, instance: object) -> BufferScope:
        """The scope of ``instance``'s calls, made on its first use."""
        scope = self._instances.get(id(instance))
        if scope is not None:
            return scope
        with self._instance_lock:  # two threads' first calls must not make two scopes
            scope = self._instances.get(id(instance))
            if scope is not None:
                return scope
            if self._scope.closed:
                self._scope._refuse_closed()
            try:
                # Drops the entry when the instance goes: the scope, unreferenced then,
                # gives its name and buffers back to the pool (its own finalizer, which
                # takes no lock: this may run inside the pool's locked sections).
                finalizer = weakref.finalize(instance, self._instances.pop, id(instance), None)
            except TypeError:
                raise InputError(
                    expected(
                        "an instance that takes weak references, so that its buffers go "
                        "with it (a class with __slots__ needs '__weakref__' among them)",
                        f"a {type(instance).__qualname__} without",
                        where=self._scope.name,
                    )
                ) from None
            finalizer.atexit = False
            name = f"{self._scope.name}[{next(self._instance_numbers)}]"
            try:
                scope = BufferScope._unique(name, pool=self._scope.pool)
            except BaseException:
                finalizer.detach()
                raise
            self._instances[id(instance)] = scope
            return scope

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

        Raises
        ------
        InputError
            The launcher is closed, as for a plain call (nothing runs).
        """
        if self._scope.closed:
            # Another scope's buffers do not reopen a launcher that close() or a
            # redefinition retired: refuse as a plain call does.
            self._scope._refuse_closed()
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
        """Free this launcher's persistent buffers, every instance's too for a method
        (the next call allocates afresh)."""
        self._scope.clear()
        for scope in _scopes(self._instances):
            scope.clear()

    def close(self) -> None:
        """Drop the launcher's buffers and give its scope name back (see
        :meth:`BufferScope.close`), every instance's too for a method; the launcher
        cannot be called afterwards."""
        self._scope.close()

    def __repr__(self) -> str:
        return f"<persistent launcher {self._scope.name} on_return={self._on_return!r}>"


class BoundLauncher(Generic[R]):
    """A method's :class:`PersistentLauncher` bound to an instance: what ``obj.method`` is.

    A call ``obj.method(*args)`` runs ``fn(scope, obj, *args)`` on ``obj``'s own scope,
    with the launcher's ``on_return`` policy. Like a bound method, it keeps ``obj``
    alive while it is referenced; the scope goes when ``obj`` does. :meth:`clear` frees
    this instance's buffers; :meth:`close` closes the launcher, for every instance.

    Parameters
    ----------
    launcher : PersistentLauncher
        The launcher defined in the class body (``__func__``).
    instance : object
        The instance it is bound to (``__self__``); it must take weak references.
    """

    __slots__ = ("__func__", "__self__")

    def __init__(self, launcher: PersistentLauncher[..., R], instance: object) -> None:
        self.__func__ = launcher
        self.__self__ = instance

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        launcher = self.__func__
        instance = self.__self__
        # Closing the launcher drops every instance's scope, so a closed one is never
        # found here, and _instance_scope refuses to make one.
        scope = launcher._instances.get(id(instance))
        if scope is None:
            scope = launcher._instance_scope(instance)
        result = launcher._fn(scope, instance, *args, **kwargs)  # type: ignore[arg-type]
        if launcher._track:
            return scope._settle(result, copy=launcher._copy)
        return result

    def call_with_scope(self, scope: BufferScope, *args: Any, **kwargs: Any) -> R:
        """Run the method on another scope's buffers, returning them untracked.

        :func:`~kernelopt.buffers.capture_graph` uses this, as it uses
        :meth:`PersistentLauncher.call_with_scope`.

        Parameters
        ----------
        scope : BufferScope
            The scope the method takes its buffers from for this call, in place of the
            instance's.
        *args, **kwargs
            The method's own arguments, after the instance.

        Returns
        -------
        R
            What the method returns, as is: ``on_return`` does not apply.

        Raises
        ------
        InputError
            The launcher is closed, as for a plain call (nothing runs).
        """
        launcher_scope = self.__func__._scope
        if launcher_scope.closed:
            # As for a plain call: closing the launcher retires every instance's method.
            launcher_scope._refuse_closed()
        fn = cast(Callable[..., R], self.__func__._fn)
        return fn(scope, self.__self__, *args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature | None:
        # fn's signature less the scope and the instance, as for a bound method.
        return self.__func__._bound_signature

    def __getattr__(self, name: str) -> Any:
        # As for a bound method, other attributes are the function's (__name__,
        # __qualname__, __wrapped__...).
        if name in self.__slots__:  # an unset slot: no launcher to ask
            raise AttributeError(name)
        return getattr(self.__func__, name)

    @property
    def scope(self) -> BufferScope:
        """The scope holding this instance's persistent buffers."""
        return self.__func__._instance_scope(self.__self__)

    @property
    def pool(self) -> BufferPool:
        """The pool the scope's buffers live in."""
        return self.__func__.pool

    @property
    def on_return(self) -> OnReturn:
        """The launcher's policy for returned buffers."""
        return self.__func__.on_return

    def clear(self) -> None:
        """Free this instance's persistent buffers (other instances keep theirs)."""
        scope = self.__func__._instances.get(id(self.__self__))
        if scope is not None:
            scope.clear()

    def close(self) -> None:
        """Close the launcher itself, as ``Class.method.close()`` does: every instance's
        scope with it, and no instance can call the method afterwards.

        To free only this instance's buffers, use :meth:`clear`; they also go when the
        instance is garbage-collected.
        """
        self.__func__.close()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoundLauncher)
            and other.__func__ is self.__func__
            and other.__self__ is self.__self__
        )

    def __hash__(self) -> int:
        return hash((id(self.__func__), id(self.__self__)))

    def __repr__(self) -> str:
        return f"<bound persistent launcher {self.__func__.scope.name} of {self.__self__!r}>"


def _scopes(instances: dict[int, BufferScope]) -> list[BufferScope]:
    """The scopes in ``instances`` now; a finalizer may drop one during the copy."""
    while True:
        try:
            return list(instances.values())
        except RuntimeError:  # changed size during iteration: copy again
            continue


def _close_all(instances: dict[int, BufferScope]) -> None:
    """Close every instance's scope (the launcher's own scope is being closed)."""
    for scope in _scopes(instances):
        scope.close()
    instances.clear()


def _without_first(signature: inspect.Signature) -> inspect.Signature:
    """``signature`` less its first positional parameter (a method's instance)."""
    params = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if params and params[0].kind in positional:
        params = params[1:]
    return signature.replace(parameters=params)


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
        Defined in a class body, it is a method whose instances each get a scope of
        their own, named ``"<name>[<k>]"`` (see :class:`BoundLauncher`).

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
