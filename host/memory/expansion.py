"""The words a question's category stands for: "what food" is answered by turns that say lava cake, not food.

A small fixed table maps common category words of everyday talk (food, sport, pet, music, ...) to words for
instances and the talk around them. The table is general English written for conversations in general,
not drawn from any data set, and it is offline and deterministic. A question that names a category gets those
words as a second, weaker words list (`ranking.py`); its own words still rank first. English only.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CATEGORIES", "category_terms", "MAX_EXPANSION"]

MAX_EXPANSION = 40
"""Instance words a question gets at most (its first categories first)."""

_FOOD = (
    "dish meal cook cooked cooking recipe bake baked baking dinner lunch breakfast dessert snack pizza pasta "
    "burger sandwich salad soup sushi rice noodles curry taco steak chicken cake cookies bread pie chocolate "
    "cheese fruit restaurant"
)
_SPORT = (
    "football soccer basketball baseball tennis golf hockey volleyball rugby cricket swimming running marathon "
    "cycling skiing surfing boxing climbing yoga gym game match team league"
)
_MUSIC = "song songs album band concert singer guitar piano drums violin playlist listen listening rap rock jazz"
_ANIMAL = "dog dogs puppy cat cats kitten bird fish hamster rabbit bunny horse turtle snake parrot vet"
_SHOW = "series episode episodes season netflix watched watching binge sitcom anime documentary tv channel"
_FILM = "movie movies film films cinema theater theatre watched watching actor director trailer"
_BOOK = "book books novel novels read reading author library chapter series poetry"
_PLACE = (
    "city town country village visit visited trip travel traveled travelled flew flight moved live lives "
    "beach mountains"
)
_ART = "painting painted paint drawing drew draw sketch sculpture pottery photography photo craft museum gallery"
_JOB = "work working job office boss company career hired internship manager shift colleague business"
_STUDY = "school college university class classes course degree major studying study exam teacher professor"
_FAMILY = "mom mother dad father sister brother parents kids son daughter wife husband grandma grandpa cousin aunt"
_GAME = "game games gaming played playing console xbox playstation nintendo chess puzzle board cards"
_DRINK = "coffee tea juice beer wine cocktail water soda smoothie latte drink drank"
_HEALTH = "sick ill illness doctor hospital medicine pain flu cold fever injury surgery therapy"
_CLOTHES = "shirt dress shoes jacket jeans sweater hat outfit wear wore wearing"
_VEHICLE = "car truck bike motorcycle bus train drive drove driving"
_HOBBY = (
    f"{_SPORT} {_ART} {_GAME} garden gardening knitting hiking camping fishing dancing singing writing reading "
    "cooking baking photography"
)

CATEGORIES: dict[str, str] = {
    "food": _FOOD,
    "eat": _FOOD,
    "cuisine": _FOOD,
    "dish": _FOOD,
    "meal": _FOOD,
    "dessert": "cake pie cookies chocolate ice cream pudding brownie cupcake sweet",
    "sport": _SPORT,
    "exercise": f"{_SPORT} workout walk walking",
    "activity": f"{_HOBBY} class club trip",
    "hobby": _HOBBY,
    "pastime": _HOBBY,
    "music": _MUSIC,
    "song": _MUSIC,
    "band": _MUSIC,
    "instrument": "guitar piano drums violin cello flute saxophone trumpet ukulele bass keyboard clarinet harp",
    "pet": _ANIMAL,
    "animal": _ANIMAL,
    "show": _SHOW,
    "tv": _SHOW,
    "series": _SHOW,
    "movie": _FILM,
    "film": _FILM,
    "book": _BOOK,
    "novel": _BOOK,
    "author": _BOOK,
    "city": _PLACE,
    "country": _PLACE,
    "place": _PLACE,
    "destination": _PLACE,
    "trip": f"{_PLACE} vacation holiday hotel",
    "vacation": f"{_PLACE} vacation holiday hotel",
    "holiday": "christmas thanksgiving easter halloween birthday new year vacation",
    "art": _ART,
    "artwork": _ART,
    "job": _JOB,
    "career": _JOB,
    "profession": _JOB,
    "work": _JOB,
    "school": _STUDY,
    "study": _STUDY,
    "subject": _STUDY,
    "family": _FAMILY,
    "relative": _FAMILY,
    "game": _GAME,
    "drink": _DRINK,
    "beverage": _DRINK,
    "illness": _HEALTH,
    "health": _HEALTH,
    "clothes": _CLOTHES,
    "clothing": _CLOTHES,
    "car": _VEHICLE,
    "vehicle": _VEHICLE,
    "weather": "rain rained raining snow snowed sunny sun hot cold warm storm wind windy cloudy",
    "language": "english spanish french german chinese japanese korean arabic italian portuguese hindi russian",
}
"""Category words (singular) and the instance words they stand for."""


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("sh", "ch", "x", "s")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def category_terms(terms: Sequence[str], limit: int = MAX_EXPANSION) -> list[str]:
    """The instance words of the categories that `terms` (a query's content words) name, without `terms`
    themselves, de-duplicated, at most `limit`."""
    asked = set(terms)
    out: dict[str, None] = {}
    for term in terms:
        for word in CATEGORIES.get(_singular(term), "").split():
            if word not in asked:
                out[word] = None
    return list(out)[:limit]
