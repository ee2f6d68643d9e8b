"""records.frozen.direct_init: the same record as the __init__ dataclass(frozen=True) writes."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest

from normalize.errors import InvalidOffer
from records.documents import Document
from records.frozen import _DIRECT, _refuse_delete, _refuse_set, direct_init, record, replaced
from records.measurements import Measurement
from records.offers import Claim, InstanceOffer, OfferIdentity, RawOffer
from records.prices import Price


@dataclass(frozen=True)
class _Plain:
    a: int
    b: str = "b"
    c: tuple[int, ...] = field(default=(), compare=False)
    seen: list = field(default_factory=list, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative")


@dataclass(frozen=True)
class _Direct:
    a: int
    b: str = "b"
    c: tuple[int, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative")


def test_the_direct_init_stores_what_the_generated_one_does():
    direct = direct_init(_Direct)
    generated: Any = dataclass(frozen=True)(
        type(
            "_Same",
            (),
            {
                "__annotations__": _Direct.__annotations__,
                "b": "b",
                "c": (),
                "__post_init__": _Direct.__post_init__,
            },
        )
    )
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}),
        ((1, "x"), {}),
        ((1,), {"c": (2,)}),
        ((), {"a": 3, "b": "y", "c": ()}),
    ]
    for args, kwargs in calls:
        assert direct(*args, **kwargs).__dict__ == generated(*args, **kwargs).__dict__
    assert [(p.name, p.default) for p in inspect.signature(direct).parameters.values()] == [
        (p.name, p.default) for p in inspect.signature(generated).parameters.values()
    ]
    with pytest.raises(ValueError, match="negative"):  # __post_init__ still runs
        direct(-1)
    with pytest.raises(dataclasses.FrozenInstanceError):  # and the record stays frozen
        direct(1).a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        direct()  # type: ignore[call-arg]


def _one_field(**options: Any) -> Any:
    return dataclass(frozen=True)(type("_One", (), {"__annotations__": {"a": "int"}, "a": field(**options)}))


@pytest.mark.parametrize(
    "cls",
    [
        _Plain,  # a default factory and a field left out of __init__
        _one_field(default_factory=int),
        _one_field(init=False, default=0),
        _one_field(kw_only=True),
        dataclass(frozen=True, slots=True)(type("_Slots", (), {"__annotations__": {"a": "int"}})),
        dataclass(type("_Mutable", (), {"__annotations__": {"a": "int"}})),
        dataclass(frozen=True)(type("_Own", (), {"__annotations__": {"__direct_values": "int"}})),
    ],
)
def test_a_class_it_cannot_reproduce_keeps_its_generated_init(cls):
    before = cls.__init__
    assert direct_init(cls).__init__ is before and cls not in _DIRECT


def test_a_field_named_values_or_self_is_stored_as_given():
    record: Any = direct_init(
        dataclass(frozen=True)(type("_Named", (), {"__annotations__": {"values": "tuple", "self": "int"}}))
    )
    assert record in _DIRECT
    assert record((1, 2), 3).__dict__ == {"values": (1, 2), "self": 3}


@pytest.mark.parametrize("cls", [Claim, OfferIdentity, RawOffer, InstanceOffer, Measurement, Price, Document])
def test_the_records_take_the_parameters_their_fields_say(cls):
    assert cls in _DIRECT  # the generated __init__ has the same name and signature
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    assert [(p.name, p.default) for p in list(inspect.signature(cls).parameters.values())] == [
        (f.name, inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(cls)
    ]


def test_replaced_is_dataclasses_replace():
    claim = Claim("gpu_count", 8.0, "8 GPUs", "https://example.com/a", context="table")
    changed: list[dict[str, Any]] = [
        {},
        {"original_url": "https://example.com/o"},
        {"value": 4.0, "quote": "4 GPUs"},
    ]
    for changes in changed:
        new = replaced(claim, **changes)
        assert new.__dict__ == dataclasses.replace(claim, **changes).__dict__ and type(new) is Claim
    with pytest.raises(InvalidOffer, match="no quote"):  # __post_init__ checks the new values
        replaced(claim, quote=" ")
    with pytest.raises(TypeError):  # not a field: dataclasses.replace refuses it as before
        replaced(claim, colour="red")
    price = Price("aws", "p5", "us-east-1", 98.32, None, "https://example.com/p", "98.32")
    assert (
        replaced(price, region="eu-west-1").__dict__
        == dataclasses.replace(price, region="eu-west-1").__dict__
    )


def _pair(body: dict[str, Any]) -> tuple[Any, Any]:
    """The same class body made by ``record`` and by ``dataclass(frozen=True)``."""
    made: list[Any] = [
        decorate(type(name, (), {"__doc__": "A record.", **body}))
        for name, decorate in (("_Record", record), ("_Frozen", dataclass(frozen=True)))
    ]
    return made[0], made[1]


def test_a_record_is_the_frozen_dataclass_of_its_class():
    body = {
        "__annotations__": {"a": "int", "b": "str", "c": "tuple[int, ...]"},
        "b": "b",
        "c": field(default=(), compare=False),
        "__post_init__": _Direct.__post_init__,
    }
    made, frozen = _pair(body)
    assert vars(made)["__setattr__"] is _refuse_set and vars(made)["__delattr__"] is _refuse_delete
    for args, kwargs in [((1,), {}), ((1, "x"), {}), ((), {"a": 3, "b": "y", "c": (2,)})]:
        one, other = made(*args, **kwargs), frozen(*args, **kwargs)
        assert one.__dict__ == other.__dict__
        assert repr(one).removeprefix("_Record") == repr(other).removeprefix("_Frozen")
        assert hash(one) == hash(other) and one == made(*args, **kwargs) and one != other
        assert dataclasses.replace(one, b="z").__dict__ == dataclasses.replace(other, b="z").__dict__
        assert copy.deepcopy(one).__dict__ == one.__dict__  # as pickle rebuilds it
        for change in (
            lambda r: setattr(r, "a", 2),
            lambda r: setattr(r, "new", 2),
            lambda r: delattr(r, "a"),
        ):
            with pytest.raises(dataclasses.FrozenInstanceError) as ours:
                change(one)
            with pytest.raises(dataclasses.FrozenInstanceError) as theirs:
                change(other)
            assert str(ours.value) == str(theirs.value)
    assert made.__dataclass_params__.__repr__() == frozen.__dataclass_params__.__repr__()
    assert [(f.name, f.default, f.compare) for f in dataclasses.fields(made)] == [
        (f.name, f.default, f.compare) for f in dataclasses.fields(frozen)
    ]
    assert str(inspect.signature(made)) == str(inspect.signature(frozen))
    assert made.__init__.__annotations__ == frozen.__init__.__annotations__
    assert made.__match_args__ == frozen.__match_args__ and made in _DIRECT
    with pytest.raises(ValueError, match="negative"):
        made(-1)


def test_a_record_keeps_its_own_hash_and_what_it_cannot_store_directly_is_a_frozen_dataclass():
    made, _ = _pair({"__annotations__": {"a": "int"}, "__hash__": lambda self: 7})
    assert hash(made(1)) == 7
    factory: Any = record(
        type(
            "_Factory",
            (),
            {"__doc__": "x", "__annotations__": {"a": "list"}, "a": field(default_factory=list)},
        )
    )
    undocumented: Any = record(type("_Bare", (), {"__annotations__": {"a": "int"}}))
    for cls in (factory, undocumented):
        assert (
            cls.__dataclass_params__.frozen
            and cls.__setattr__.__qualname__ == f"{cls.__qualname__}.__setattr__"
        )
    assert undocumented.__doc__ == "_Bare(a: 'int')"


def _frozen_alike(body: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """A record of ``body`` made with ``args``/``kwargs``, checked to be as dataclass(frozen=True)'s."""
    made, frozen = _pair(body)
    one, other = made(*args, **kwargs), frozen(*args, **kwargs)
    assert one.__dict__ == other.__dict__
    assert [(f.name, f.kw_only) for f in dataclasses.fields(made)] == [
        (f.name, f.kw_only) for f in dataclasses.fields(frozen)
    ]
    assert (made.__hash__ is None) == (frozen.__hash__ is None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 2
    return one


def test_a_record_with_its_own_eq_an_initvar_or_kw_only_fields_is_what_dataclass_makes():
    def equal(self: Any, other: Any) -> bool:
        return isinstance(other, type(self)) and self.a == other.a

    def post_init(self: Any, scale: int) -> None:
        object.__setattr__(self, "a", self.a * scale)

    assert hash(_frozen_alike({"__annotations__": {"a": "int"}, "__eq__": equal}, 1)) == hash((1,))
    scaled = {
        "__annotations__": {"a": "int", "scale": "dataclasses.InitVar[int]"},
        "__post_init__": post_init,
    }
    assert _frozen_alike(scaled, 2, 3).a == 6
    keyword = {"__annotations__": {"a": "int", "_": "dataclasses.KW_ONLY", "b": "int"}}
    assert _frozen_alike(keyword, 1, b=2).b == 2
    with pytest.raises(TypeError):
        _frozen_alike(keyword, 1, 2)


def test_fields_hash_hashes_what_the_generated_hash_hashes():
    """planner.memo.fields_hash equals dataclass(frozen=True)'s own hash for no field, one field,
    and fields left out of the comparison or the hash."""
    from planner.memo import fields_hash

    @dataclass(frozen=True)
    class Empty:
        pass

    @dataclass(frozen=True)
    class One:
        a: int

    @dataclass(frozen=True)
    class Some:
        a: int
        b: str = field(default="b", compare=False)
        c: int = field(default=3, hash=False)
        d: int = field(default=4, compare=False, hash=True)

    for value in (Empty(), One(1), Some(1), Some(1, "other", 9, 4)):
        assert fields_hash(value) == hash(value), value
    assert fields_hash(Some(1, "x")) == fields_hash(Some(1, "y"))
