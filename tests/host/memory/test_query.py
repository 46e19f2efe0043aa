"""Query building: content words only, Han/kana as bigrams, quoted and OR-joined."""

from __future__ import annotations

from host.memory.query import index_body, match_expression, query_terms


def test_stopwords_and_question_words_are_dropped_and_terms_deduplicated() -> None:
    assert query_terms("When did Caroline go to the LGBTQ support group? Caroline!") == [
        "caroline",
        "go",
        "lgbtq",
        "support",
        "group",
    ]


def test_numbers_are_kept_and_single_letters_are_not() -> None:
    assert query_terms("a trip in 2023 to x") == ["trip", "2023"]


def test_han_runs_become_bigrams_on_both_sides() -> None:
    assert query_terms("我住在柏林") == ["我住", "住在", "在柏", "柏林"]
    assert index_body("用户住在柏林", "user.home_city") == " 用户 户住 住在 在柏 柏林 \nuser home city"


def test_the_expression_ors_quoted_terms_and_escapes_quotes() -> None:
    assert match_expression(['say"hi', "tea"]) == '"say""hi" OR "tea"'
    assert match_expression([]) is None
