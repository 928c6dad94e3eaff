"""Copies of a paused world, derived from what its attributes hold rather than listed by hand.

:func:`copy_state` gives an independent copy of an object: a new object of its class whose
attributes are copied by kind, so a world that gains an attribute needs no change to be copied
right. The rules, in order:

- **Shared**: the names a class lists in ``_shared`` (data a run reads and never changes, e.g. the
  jobs' arrival times as a list), immutable values (numbers, strings, ``None``, tuples of them,
  frozen dataclasses such as the jobs, catalogs and configurations, NumPy arrays that are not
  writeable), functions and classes, and recorders (a copy reports to the same recorder).
- **Copied once**: an object reached twice (a ticker's kernel, a validator's world, the object
  itself) is copied once and both places get the same copy.
- **Containers**: lists, dicts, sets and deques become new containers. A container holds one
  kind of element, as its annotation says (``list[int]``, ``dict[int, list[int]]``): when its first
  or last element (a dict's value) is a container or an array, its elements of those kinds are
  copied in turn; other elements are shared (keep them immutable: tuples, numbers, frozen records,
  as the kernel's payloads are). Looking at two elements, not all, keeps a long list's copy at the
  speed of ``list.copy``. A tuple is new only when one of its elements had to be copied (a tuple of
  bound handlers, of columns).
- **Arrays**: an ``array.array`` is copied; a NumPy array is copied, except that a view of an
  ``array.array`` column (``np.frombuffer``) becomes the same view of that column's copy.
- **Bound methods** of the object being copied (or of one copied before them) are bound to its
  copy (a world's handlers).
- **Objects** with a ``copy()`` that takes no argument are copied by it (a kernel, a ledger);
  other objects with a ``__dict__`` or ``__slots__`` by :func:`copy_state` in turn; anything else
  is refused with :class:`TypeError` (list it in ``_shared`` if it never changes).

The cost is one pass over the attributes (a few microseconds for a world) plus the containers'
own copies, which a hand-written copy pays too.
"""

from __future__ import annotations

import enum
import inspect
import operator
import types
from array import array
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from broker.sim.recorder import Recorder

T = TypeVar("T")
Memo = dict[int, Any]
Rule = Callable[[Any, Memo], Any]

#: Classes whose values are shared as they are: immutable, or code.
_ALWAYS_KEPT: frozenset[type] = frozenset({int, float, bool, str, bytes, complex, type(None), range, frozenset, type,
                                           types.FunctionType, types.BuiltinFunctionType})
#: Those and the classes the rules found so since (a cache, as :data:`_RULES` and :data:`_LAYOUTS` are).
_KEPT: set[type] = set(_ALWAYS_KEPT)
#: Element kinds a container's copy copies too (other elements are shared).
_NESTED = frozenset({list, dict, set, deque, np.ndarray, array})
#: An unset slot.
_UNSET = object()
#: Worked out once per class: how its values are copied; the names it shares and its slots.
_RULES: dict[type, Rule] = {}
_LAYOUTS: dict[type, tuple[frozenset[str], tuple[str, ...]]] = {}


def copy_state(obj: T, memo: Memo | None = None) -> T:
    """An independent copy of ``obj``, attribute by attribute (module docstring).

    ``memo`` maps the ids of the objects already copied in this copy to their copies.
    """
    cls = type(obj)
    twin = cls.__new__(cls)
    memo = {} if memo is None else memo
    memo[id(obj)] = twin
    shared, slots = _layout(cls)
    state = getattr(obj, "__dict__", None)
    if state is not None:
        copied = twin.__dict__
        copied.update(state)
        for name, value in state.items():
            if type(value) not in _KEPT and name not in shared:
                copied[name] = copy_value(value, memo)
    for name in slots:
        value = getattr(obj, name, _UNSET)
        if value is not _UNSET:
            setattr(twin, name, value if type(value) in _KEPT or name in shared else copy_value(value, memo))
    return twin


def copy_value(value: Any, memo: Memo) -> Any:
    """The copy of one attribute's value by its kind (module docstring); each object is copied once."""
    if type(value) in _KEPT:
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    rule = _RULES.get(type(value))
    if rule is None:
        rule = _RULES[type(value)] = _rule_of(type(value))
        if rule is _share:
            _KEPT.add(type(value))
    twin = rule(value, memo)
    memo[id(value)] = twin
    return twin


def _rule_of(cls: type) -> Rule:
    """How values of ``cls`` are copied."""
    if cls in _CONTAINER_RULES:
        return _CONTAINER_RULES[cls]
    if _immutable(cls) or issubclass(cls, Recorder):
        return _share
    method = getattr(cls, "copy", None)
    if callable(method) and _takes_no_argument(method):
        return _own_copy
    if cls.__dictoffset__ or _layout(cls)[1]:  # a Python object: its attributes one by one
        return copy_state
    raise TypeError(f"cannot copy a {cls.__qualname__}: give it a copy() or list the attribute in _shared")


def _immutable(cls: type) -> bool:
    """Frozen dataclasses, enums, NumPy scalars and subclasses of numbers and strings: values that never change."""
    params = getattr(cls, "__dataclass_params__", None)
    return (params is not None and params.frozen) or issubclass(cls, (enum.Enum, np.generic, int, float, str))


def _takes_no_argument(method: Callable[..., Any]) -> bool:
    """Whether ``method`` (unbound) can be called with ``self`` alone."""
    try:
        parameters = list(inspect.signature(method).parameters.values())[1:]
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def _layout(cls: type) -> tuple[frozenset[str], tuple[str, ...]]:
    """The names ``cls`` and its bases list in ``_shared``; their ``__slots__`` but ``__dict__`` and ``__weakref__``."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        shared: list[str] = []
        slots: list[str] = []
        for klass in cls.__mro__:
            shared += vars(klass).get("_shared", ())
            names = vars(klass).get("__slots__", ())
            slots += [names] if isinstance(names, str) else list(names)
        kept = tuple(n for n in dict.fromkeys(slots) if n not in ("__dict__", "__weakref__"))
        layout = _LAYOUTS[cls] = (frozenset(shared), kept)
    return layout


def _share(value: Any, memo: Memo) -> Any:
    return value


def _own_copy(value: Any, memo: Memo) -> Any:
    return value.copy()


def _list(value: list[Any], memo: Memo) -> list[Any]:
    if not value or (type(value[0]) not in _NESTED and type(value[-1]) not in _NESTED):
        return value.copy()
    return [copy_value(v, memo) if type(v) in _NESTED else v for v in value]


def _dict(value: dict[Any, Any], memo: Memo) -> dict[Any, Any]:
    if not value or (type(next(iter(value.values()))) not in _NESTED
                     and type(next(reversed(value.values()))) not in _NESTED):
        return value.copy()
    return {k: copy_value(v, memo) if type(v) in _NESTED else v for k, v in value.items()}


def _deque(value: deque[Any], memo: Memo) -> deque[Any]:
    if not value or (type(value[0]) not in _NESTED and type(value[-1]) not in _NESTED):
        return value.copy()
    return deque([copy_value(v, memo) if type(v) in _NESTED else v for v in value], value.maxlen)


def _tuple(value: tuple[Any, ...], memo: Memo) -> tuple[Any, ...]:
    items = [copy_value(v, memo) for v in value]
    return value if all(map(operator.is_, items, value)) else tuple(items)


def _method(value: types.MethodType, memo: Memo) -> types.MethodType:
    owner = memo.get(id(value.__self__))
    return value if owner is None else types.MethodType(value.__func__, owner)


def _ndarray(value: np.ndarray, memo: Memo) -> np.ndarray:
    if not value.flags.writeable:
        return value
    base = value.base
    if isinstance(base, memoryview) and isinstance(base.obj, array):
        column = base.obj
        if value.nbytes != column.itemsize * len(column):
            raise TypeError("cannot copy a view of part of an array.array column")
        return np.frombuffer(copy_value(column, memo), dtype=value.dtype)
    return value.copy()


def _array(value: array[Any], memo: Memo) -> array[Any]:
    return value[:]


_CONTAINER_RULES: dict[type, Rule] = {
    list: _list, dict: _dict, set: _own_copy, deque: _deque, tuple: _tuple, types.MethodType: _method,
    np.ndarray: _ndarray, array: _array,
}
