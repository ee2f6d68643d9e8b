"""records.frozen.direct_init: the same record as the __init__ dataclass(frozen=True) writes."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest

from normalize.errors import InvalidOffer
from records.documents import Document
from records.frozen import _DIRECT, direct_init, replaced
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
