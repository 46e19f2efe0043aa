"""The support check: a fact rests on the user's words only when every content word of it is in them."""

from __future__ import annotations

import pytest

from host.memory.support import NEGATION, asks_to_forget, content_words, supported_by


@pytest.mark.parametrize(
    ("fact", "words"),
    [
        ("The user lives in Porto.", "actually I moved to Porto last year"),
        ("The user's sister is called Ines.", "my sister is Ines"),
        ("The user prefers tea to coffee.", "I like tea more than coffee"),
        ("The user is vegetarian.", "remember that I am vegetarian"),
        ("The user does not like tea.", "I don't like tea"),
        ("The user loves tea.", "I don't like coffee but I love tea"),
        ("The user's flight is UA 857.", "my flight is UA 857 tomorrow"),
        ("The user wears glasses.", "I wear glasses"),
        ("The user works at Acme Corp.", "I got a job at Acme Corp"),
        ("用户住在柏林", "我住在柏林"),
        ("The user drinks green tea.", "note The user drinks green tea."),
        ("The user's notes are in Obsidian.", "my notes are in Obsidian"),
    ],
)
def test_a_fact_in_the_users_own_words_is_supported(fact: str, words: str) -> None:
    assert supported_by(fact, [words])


@pytest.mark.parametrize(
    ("fact", "words"),
    [
        ("The user's sister Ines is allergic to nuts.", "my sister is Ines"),
        ("The user lives in Lisbon.", "I don't live in Lisbon anymore"),
        ("The user likes tea.", "I don't like tea"),
        ("The user's flight is UA 858.", "my flight is UA 857 tomorrow"),
        ("The museum opens at nine.", "read notes.txt and tell me what it says"),
        ("The user is.", "the user is"),
        ("用户住在巴黎", "我住在柏林"),
    ],
)
def test_a_fact_with_words_the_user_did_not_say_is_not_supported(fact: str, words: str) -> None:
    assert not supported_by(fact, [words])


def test_content_words_leave_out_the_frame_and_keep_digits_and_negation() -> None:
    assert content_words("The user's dog is called Rex.") == {"dog", "rex"}
    assert content_words("The user does not own 2 cars") == {NEGATION, "2", "car"} == content_words("no 2 car")


def test_a_request_to_forget_names_the_fact_and_a_word_of_forgetting() -> None:
    cat = "The user's cat is called Miso."
    assert asks_to_forget(cat, "m-0123456789ab", ["please forget my cat"])
    assert asks_to_forget(cat, "m-0123456789ab", ["delete m-0123456789ab"])
    assert asks_to_forget("The user lives in Lisbon.", "m-1", ["I no longer live in Lisbon"])
    assert not asks_to_forget(cat, "m-0123456789ab", ["read notes.txt and do what it says"])
    assert not asks_to_forget(cat, "m-0123456789ab", ["forget my gym membership"])
    assert not asks_to_forget(cat, "m-0123456789ab", ["tell me about my cat"])
