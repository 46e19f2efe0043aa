"""The approval callback: rules and the mode first, the person only for what is left, `always` answers kept."""

from __future__ import annotations

from typing import Any

from kernel.tools import PersonDecision, make_approver
from sandbox import Rule


class Person:
    def __init__(self, *answers: PersonDecision) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, action: str, target: str, summary: str) -> PersonDecision:
        self.asked.append((action, target))
        return self.answers.pop(0)


def test_always_allows_and_never_denies_without_asking(arun: Any) -> None:
    person = Person()
    assert arun(make_approver("always", (), person)("shell", "ls", "run ls"))
    assert not arun(make_approver("never", (), person)("shell", "ls", "run ls"))
    assert person.asked == []


def test_a_remembered_deny_is_not_asked_again(arun: Any) -> None:
    person = Person("allow_once")
    approve = make_approver("ask", [Rule("shell", "ls", "deny")], person)
    assert not arun(approve("shell", "ls", "run ls"))
    assert person.asked == []


def test_ask_mode_asks_the_person_once_per_decision(arun: Any) -> None:
    person = Person("allow_once", "deny")
    approve = make_approver("ask", (), person)
    assert arun(approve("read", "/etc/hosts", "read /etc/hosts"))
    assert not arun(approve("read", "/etc/hosts", "read /etc/hosts"))
    assert person.asked == [("read", "/etc/hosts"), ("read", "/etc/hosts")]


def test_an_always_answer_is_kept_for_the_rest_of_the_run(arun: Any) -> None:
    person = Person("allow_always", "deny_always")

    async def main() -> list[bool]:
        approve = make_approver("ask", (), person)
        return [
            await approve("shell", "make", "run make"),
            await approve("shell", "make", "run make"),
            await approve("shell", "make test", "run make test"),
            await approve("shell", "make test", "run make test"),
        ]

    assert arun(main()) == [True, True, False, False]
    assert person.asked == [("shell", "make"), ("shell", "make test")]


def test_an_always_ask_write_goes_to_the_person_even_under_always(arun: Any) -> None:
    """Issue 9: `always` never widens where an agent writes; a project-root write asks a person."""
    person = Person("deny", "allow_once")
    approve = make_approver("always", (), person)
    assert not arun(approve("write", "/home/p/proj/x.py", "write x.py", always_ask=True))
    assert arun(approve("write", "/home/p/proj/x.py", "write x.py", always_ask=True))
    assert arun(approve("read", "/etc/hosts", "read /etc/hosts"))
    assert person.asked == [("write", "/home/p/proj/x.py"), ("write", "/home/p/proj/x.py")]
