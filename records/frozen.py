"""A frozen dataclass's ``__init__`` that stores its fields straight into the instance's ``__dict__``.

The ``__init__`` that ``dataclass(frozen=True)`` writes sets each field through
``object.__setattr__``, a call per field: about half of making a record (a refresh makes some 15,000
claims, measurements and prices, and reads back every published row). ``direct_init`` replaces it
with one that takes the same parameters, with the same defaults, stores the same values in the same
``__dict__`` and calls ``__post_init__`` as the generated one does. Frozenness is unchanged:
assigning an attribute afterwards still raises. A class it cannot reproduce exactly keeps its
generated ``__init__``: one that is not frozen or has slots, or a field with a default factory,
keyword-only, left out of ``__init__``, named as the generated source's own names, or shadowed by a
data descriptor (``_not_plain``), or one with ``InitVar`` or ``ClassVar`` pseudo-fields. ``record``
makes such a class from its body with less work than ``dataclass(frozen=True)`` followed by
``direct_init``, for the many records one short command loads.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

#: The generated ``__init__``'s own names for the instance and its ``__dict__`` (a field may not use them).
_SELF, _VALUES = "__direct_self", "__direct_values"
#: The classes given direct_init's ``__init__``, with their field names.
_DIRECT: dict[type, frozenset[str]] = {}


@dataclasses.dataclass(frozen=True)
class _Frozen:
    """A plain ``dataclass(frozen=True)``, made once for its parameters."""


#: What every ``record`` reports as its ``__dataclass_params__``: a plain frozen dataclass's, taken
#: from one rather than built, since the parameters' private class changes between Python versions.
_FROZEN_PARAMS = _Frozen.__dataclass_params__  # type: ignore[attr-defined]


def direct_init(cls: type[T]) -> type[T]:
    """``cls`` (a frozen dataclass, decorated first) with the ``__init__`` described above."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if (
        hasattr(cls, "__slots__")
        or not cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        or any(_not_plain(cls, f) for f in fields)
        or len(cls.__dataclass_fields__) != len(fields)  # type: ignore[attr-defined]
    ):
        return cls
    _give_init(cls, fields, cls.__init__.__doc__, dict(cls.__init__.__annotations__))
    return cls


def _give_init(
    cls: type, fields: tuple[dataclasses.Field[Any], ...], doc: str | None, annotations: dict[str, Any]
) -> None:
    """Give ``cls`` the ``__init__`` that stores ``fields`` straight into the instance's ``__dict__``."""
    defaults = {f"_default_{f.name}": f.default for f in fields if f.default is not dataclasses.MISSING}
    parameters = ", ".join(
        f.name if f.default is dataclasses.MISSING else f"{f.name}=_default_{f.name}" for f in fields
    )
    stores = "".join(f"    {_VALUES}[{f.name!r}] = {f.name}\n" for f in fields)
    post = f"    {_SELF}.__post_init__()\n" if hasattr(cls, "__post_init__") else ""
    source = f"def __init__({_SELF}, {parameters}):\n    {_VALUES} = {_SELF}.__dict__\n{stores}{post}"
    namespace: dict[str, Any] = dict(defaults)
    exec(source, namespace)  # built above from the class's own field names, nothing else
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = doc
    init.__annotations__ = annotations
    cls.__init__ = init  # type: ignore[misc]
    _DIRECT[cls] = frozenset(f.name for f in fields)


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """``dataclass(frozen=True)(cls)`` with ``direct_init``'s ``__init__``, made with less work: the
    ``__init__`` is written once (not generated, then replaced), and the ``__setattr__`` and
    ``__delattr__`` that refuse a field are this module's two functions, where ``dataclass`` writes
    and compiles both anew for every frozen class (what that costs a ``plan``: docs/benchmarks.md).
    The class is a frozen dataclass in every other way (its equality, hash, repr, fields,
    ``__dataclass_params__``). A class that ``_left_to_dataclass`` names is
    ``direct_init(dataclass(frozen=True)(cls))`` instead."""
    if _left_to_dataclass(cls):
        return direct_init(dataclasses.dataclass(frozen=True)(cls))
    made: Any = dataclasses.dataclass(init=False, unsafe_hash="__hash__" not in vars(cls))(cls)
    fields = dataclasses.fields(made)
    if any(_not_plain(made, f) for f in fields):
        raise TypeError(f"{cls.__qualname__}: record passed a field it cannot store directly")
    made.__setattr__, made.__delattr__ = _refuse_set, _refuse_delete
    made.__dataclass_params__ = _FROZEN_PARAMS
    _give_init(made, fields, None, {f.name: f.type for f in fields} | {"return": None})
    return made


def _left_to_dataclass(cls: type) -> bool:
    """Whether ``record`` leaves ``cls`` to ``dataclass(frozen=True)``: slots, no docstring (which
    ``dataclass`` writes from the ``__init__``), a dataclass base, an ``__eq__`` of its own (its body
    then holds ``__hash__ = None``), a ``__setattr__`` or ``__delattr__`` in it or a base, an
    ``InitVar``, ``ClassVar`` or ``KW_ONLY`` annotation, or a field ``direct_init`` cannot store."""
    own = vars(cls)
    annotations = own.get("__annotations__", {})
    return (
        "__slots__" in own
        or own.get("__doc__") is None
        or "__eq__" in own
        or any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:])
        or any("__setattr__" in vars(b) or "__delattr__" in vars(b) for b in cls.__mro__[:-1])
        or any(
            word in (a if isinstance(a, str) else repr(a))
            for a in annotations.values()
            for word in ("InitVar", "ClassVar", "KW_ONLY")
        )
        or any(
            name in (_SELF, _VALUES)
            or name.startswith("_default_")
            or hasattr(type(getattr(cls, name, None)), "__set__")
            for name in annotations
        )
        or any(
            isinstance(v, dataclasses.Field)
            and (v.default_factory is not dataclasses.MISSING or not v.init or v.kw_only is True)
            for v in own.values()
        )
    )


def _refuse_set(self: Any, name: str, value: Any) -> None:
    """A ``record``'s ``__setattr__``: as ``dataclass(frozen=True)`` writes it for a class whose bases
    define none (``_left_to_dataclass``), where its ``super()`` call is ``object``'s."""
    if type(self).__dict__.get("__setattr__") is _refuse_set or name in self.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _refuse_delete(self: Any, name: str) -> None:
    """A ``record``'s ``__delattr__``: as ``_refuse_set`` is its ``__setattr__``."""
    if type(self).__dict__.get("__delattr__") is _refuse_delete or name in self.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _not_plain(cls: type, field: dataclasses.Field[Any]) -> bool:
    """Whether ``field`` needs the generated ``__init__``: a default factory, keyword-only, left out
    of ``__init__``, a name the generated source uses itself, or a class attribute that is a data
    descriptor (which a store into ``__dict__`` would bypass)."""
    attribute = getattr(cls, field.name, None)
    return (
        field.default_factory is not dataclasses.MISSING
        or field.kw_only is True
        or not field.init
        or field.name in (_SELF, _VALUES)
        or field.name.startswith("_default_")
        or hasattr(type(attribute), "__set__")
    )


def replaced(record: T, **changes: Any) -> T:
    """``dataclasses.replace(record, **changes)`` for a record with ``direct_init``'s ``__init__``: the
    same values stored the same way and ``__post_init__`` run on them, without a call per field to
    read them back and pass them in again. Anything else (another class, a name that is not a field,
    a record whose ``__dict__`` holds more or less than its fields) goes to ``dataclasses.replace``."""
    names = _DIRECT.get(type(record))
    own = record.__dict__
    if names is None or own.keys() != names or not changes.keys() <= names:
        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    new = object.__new__(type(record))
    values = new.__dict__
    values.update(own)
    values.update(changes)
    if hasattr(new, "__post_init__"):
        new.__post_init__()
    return new
