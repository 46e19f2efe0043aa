"""Which text looks like a credential: the detectors behind the sensitive-content gate.

Token shapes come from `detect-secrets` (Yelp's detectors: AWS, Azure storage, GitHub, GitLab, Slack, Stripe,
SendGrid, npm, PyPI, JWT, private keys, URLs with a password and more), each run on one line through its
`analyze_string` (pure regex work: no settings, no verification, no network). A few shapes it does not know
follow (OpenAI project and Anthropic keys, Hugging Face, npm and Stripe test tokens without context, an
Authorization header, an AWS secret key outside code), then a small layer for passwords said in prose, then
random-looking tokens (detect-secrets' Shannon entropy, plus mixed character classes, so a commit hash, a
CamelCase name or an order number passes), then card numbers (Luhn). Input is already normalised (`gate`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

__all__ = ["Finding", "find_secret"]


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a text was refused: the rule's name and what it saw, never the value."""

    rule: str
    label: str


_DETECTORS: tuple[tuple[BasePlugin, str], ...] = (
    (PrivateKeyDetector(), "a private key"),
    (AWSKeyDetector(), "an AWS key"),
    (AzureStorageKeyDetector(), "an Azure storage key"),
    (GitHubTokenDetector(), "a GitHub token"),
    (GitLabTokenDetector(), "a GitLab token"),
    (SlackDetector(), "a Slack token"),
    (StripeDetector(), "a Stripe key"),
    (SendGridDetector(), "a SendGrid key"),
    (NpmDetector(), "an npm token"),
    (PypiTokenDetector(), "a PyPI token"),
    (OpenAIDetector(), "an OpenAI key"),
    (JwtTokenDetector(), "a JSON web token"),
    (DiscordBotTokenDetector(), "a Discord token"),
    (TelegramBotTokenDetector(), "a Telegram bot token"),
    (TwilioKeyDetector(), "a Twilio key"),
    (MailchimpDetector(), "a Mailchimp key"),
    (SquareOAuthDetector(), "a Square token"),
    (ArtifactoryDetector(), "an Artifactory token"),
    (BasicAuthDetector(), "a password in a URL"),
)

_QUOTED = Base64HighEntropyString()

_SHAPES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("OpenAIProjectKey", "an OpenAI key", re.compile(r"\bsk-(?:proj|svcacct|admin|live)-[A-Za-z0-9_\-]{20,}")),
    ("AnthropicKey", "an Anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("GenericSkKey", "an API key", re.compile(r"\bsk-[A-Za-z0-9]{32,}\b")),
    ("HuggingFaceToken", "a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("NpmToken", "an npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("StripeKey", "a Stripe key", re.compile(r"\b(?:sk|rk)_(?:test|live)_[0-9A-Za-z]{16,}")),
    ("GoogleApiKey", "a Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("SlackToken", "a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    (
        "AuthorizationHeader",
        "an Authorization header",
        re.compile(r"\b(?:proxy-)?authorization\s*[:=]\s*(?:basic|bearer|token|digest|negotiate)\s+\S{6,}", re.I),
    ),
    ("BearerToken", "a bearer token", re.compile(r"\bbearer\s+[A-Za-z0-9._~+/\-]{20,}=*", re.I)),
    (
        "AwsSecretKey",
        "an AWS secret key",
        re.compile(
            r"\baws[ _\-]?secret[ _\-]?(?:access[ _\-]?)?key(?:[ _\-]?id)?\s*(?:[:=]|is\b|was\b)\s*\S{8,}", re.I
        ),
    ),
    ("AzureConnectionKey", "an Azure key", re.compile(r"\b(?:AccountKey|SharedAccessKey)\s*=\s*[A-Za-z0-9+/=]{20,}")),
    (
        "SecretAssignment",
        "a key or secret",
        re.compile(
            r"(?<![A-Za-z0-9])(?:api[_\-]?key|secret[_\-]?key|client[_\-]?secret|access[_\-]?token|"
            r"auth[_\-]?token|private[_\-]?key|x-api-key|passwd|password)[\"']?\s*[:=]\s*[\"'`]?[^\s\"'`]{6,}",
            re.I,
        ),
    ),
)

_PROSE_KEYWORD = (
    r"(?:password|passwd|passphrase|passcode|pass\s*code|pwd|pw|pin(?:\s*(?:code|number))?|"
    r"(?:aws\s+)?secret(?:\s+access)?(?:\s+key)?|api[\s_-]?key|access[\s_-]?token|auth[\s_-]?token|token|"
    r"private[\s_-]?key|client[\s_-]?secret|recovery\s+code|security\s+code|cvv|mot\s+de\s+passe|"
    r"(?:wi-?fi|wlan|wpa[23]?|hotspot)\s+(?:key|passkey|code)|"
    r"contrase[nñ]a|passwort|kennwort|senha)"
)
_PROSE_IS = re.compile(
    rf"\b{_PROSE_KEYWORD}(?:\s+(?:for|to|of|on)\s+(?:[^\s.,;:]+\s+){{0,5}}?[^\s.,;:]+)?"
    r"\s+(?:(?:is|was|are|will\s+be|reads|ist|est|es|é|är)\b|[=:\-])\s*(?P<value>\S+)",
    re.I,
)
_PROSE_ASSIGN = re.compile(rf"\b{_PROSE_KEYWORD}[\"']?\s*[:=]\s*(?P<value>\S+)", re.I)
_LOGIN_VERB = (
    r"(?:log(?:s|ged|ging)?\s*-?\s*(?:in|on)(?:to)?|login|sign(?:s|ed|ing)?\s*-?\s*(?:in|on)(?:to)?|ssh|"
    r"connect(?:s|ed|ing)?|authenticat(?:e|es|ed|ing))"
)
# "I log in to the NAS as admin with X", "ssh root@host using X": a few words, then what it is done with.
_PROSE_LOGIN = re.compile(
    rf"\b{_LOGIN_VERB}\b(?P<where>(?:\s+\S*[^\s,.;!?]){{0,6}}?)\s+(?:with|using|via|/)\s+(?P<value>\S+)(?!\S)"
    r"(?!\s+(?:keys?|certificates?|certs?|accounts?|tokens?|apps?|authenticator|login|sign-?in|auth\w*)\b)",
    re.I,
)
# The short form, read as before: "log in as admin with X" right after the verb, any word but a filler.
_PROSE_LOGIN_AS = re.compile(
    r"\b(?:log\s*-?\s*in|sign\s*-?\s*in|login|ssh)\s+(?:as|with|to)\s+\S+\s+(?:with|using|and|/)\s+"
    r"(?:(?:the\s+)?(?:password|pw|pwd)\s+)?(?P<value>\S+)",
    re.I,
)
_LOGIN_USER = re.compile(r"(?:^|\s)as\s+(?!(?:the|a|an|my|your|our|their|well|usual|always|before)\b)\S|\S@\S", re.I)
# "my login for the NAS is admin / X", "the VPN credentials are deploy:X", "sign in as jane/X".
_PROSE_LOGIN_PAIR = re.compile(
    r"\b(?:log\s*-?\s*(?:in|on)|sign\s*-?\s*(?:in|on)|credentials|creds|user(?:name)?\s+and\s+password)"
    r"(?:\s+(?:for|to|of|on|at)(?:\s+[^\s,.;:]+){1,5}?)?(?:\s+(?:is|are|was|were|as)\b|\s*[:=])\s*"
    r"(?P<user>[\w.@+\-]+?)\s*(?:/|:|,\s*(?:and\s+)?|\s+and\s+)\s*(?P<value>\S+)",
    re.I,
)
# "use admin with password X", "ssh root@host with pass X", "and PIN 4821".
_PROSE_WITH_PASSWORD = re.compile(
    r"\b(?:with|using|via|and)\s+(?:the\s+|a\s+)?(?P<keyword>password|passphrase|passcode|pass|pw|pwd|pin)\s+"
    r"(?P<value>\S+)",
    re.I,
)
_PROSE_HINTS = tuple(
    "pass pw pin secret key token code cvv senha contrase kennwort log sign ssh connect authent cred "
    "密 口令 パス 비밀".split()
)
_PROSE_CJK = re.compile(r"(?:密码|口令|密碼|パスワード|비밀번호)\s*(?:是|为|為|は|:|：|=)\s*\S{3,}")

_NOT_A_VALUE = frozenset(
    "a an the my your our their his her its this that these those it at in on of for to with by from into is was "
    "be been being not no none never always still also only just very too so same different new old correct "
    "incorrect wrong right long short strong weak secure insecure safe unsafe simple easy hard difficult complex "
    "secret private public hidden unknown known lost missing empty blank optional mandatory required needed "
    "necessary valid invalid active inactive case sensitive there here what which how why where when because "
    "and or but if than then still something anything nothing written shown changed reset stored saved managed "
    "expired forgotten shared".split()
)
# An address, a path, a URL, a version or a CONSTANT_NAME is what a login is done with, or to, not a password.
_NOT_A_PASSWORD = re.compile(
    r"^(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+|[A-Za-z]*[\-_]?v?\d+(?:\.\d+)+[0-9A-Za-z]*(?:[\-+.][0-9A-Za-z]+)*|[~.]?/\S*|[a-z][a-z0-9+.\-]*://\S*)$",
    re.I,
)
_JOINED_WORDS = re.compile(r"(?<=[^\W\d_])['’\-](?=[^\W\d_])")
_DIGIT_THEN_LETTER = re.compile(r"\d[^\W\d_]")
_ADJECTIVE_ENDINGS = ("ed", "ing", "able", "ible", "ful", "less", "ive", "ous", "ent", "ant", "ic", "ly", "ary")

_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{20,}(?![A-Za-z0-9+/=_\-])")
_URL = re.compile(r"(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://\S+", re.I)  # from a run's start: linear
_URL_SECRET = re.compile(
    r"[?&#](?:[a-z_\-]*(?:token|key|secret|sig|signature|password|pwd|auth)[a-z_\-]*)=([^&#\s]{8,})", re.I
)
_WORDISH = re.compile(r"[A-Z]?[a-z]{2,}")
_UUID = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum that every payment card number satisfies."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _looks_like_a_credential(raw: str, *, assigned: bool) -> bool:
    """Whether the word after "password is" (or "pw:") is a value rather than a description of one."""
    quoted = raw[:1] in "\"'`“‘«" and len(raw) > 2
    value = raw.strip("\"'`“”‘’«».,;:!?)(")
    if quoted:
        return len(value) >= 3
    if len(value) < (3 if assigned else 4) or value.casefold() in _NOT_A_VALUE:
        return False
    if assigned or not value.isalpha() or not value.islower():
        return True
    return not value.casefold().endswith(_ADJECTIVE_ENDINGS)


def _password_like(raw: str, *, strong: bool = False) -> bool:
    """Whether the word a login is done "with" is a password: letters with digits or symbols, not an address,
    a path or a version. `strong` (no user named, no "password" said) also wants a digit or a symbol inside
    the letters, so "log in with Office365" passes and "log in with Lemon3f2a!" does not."""
    if raw[:1] in "\"'`“‘«" and len(raw) > 2:
        return True
    # A mark that may end the sentence does not count as a symbol: "log in with Google!" is no password.
    value = raw.strip("\"'`“”‘’«»)(").rstrip(".,;:!?")
    if len(value) < (8 if strong else 6) or value.casefold() in _NOT_A_VALUE or _NOT_A_PASSWORD.match(value):
        return False
    value = _JOINED_WORDS.sub("", value)  # "like-minded" and "O'Brien" are words, not symbols
    if not any(c.isalpha() for c in value):
        return False
    if not strong:
        return any(not c.isalpha() for c in value)
    # What product names lack: a digit inside the letters ("Lemon3f2a", not "iPhone15") or a symbol inside.
    return _DIGIT_THEN_LETTER.search(value) is not None or any(not c.isalnum() for c in value[1:-1])


def _login_value_is_secret(match: re.Match[str]) -> bool:
    """A login's "with X": a password when the sentence names who logs in, or X looks like one outright."""
    return _password_like(match.group("value"), strong=not _LOGIN_USER.search(match.group("where")))


def _keyed_value_is_secret(match: re.Match[str]) -> bool:
    """The X of "with password X" or "and PIN X": a password, or digits alone for a PIN or passcode."""
    value = match.group("value").rstrip(".,;:!?)")
    if match.group("keyword").casefold() in ("pin", "passcode") and value.isdigit():
        return 4 <= len(value) <= 12
    return _password_like(match.group("value"))


def _wordish(token: str) -> float:
    """How much of `token` is made of word-like runs (`Word`, `word`): about a third for a random key."""
    return sum(len(run) for run in _WORDISH.findall(token)) / len(token)


def _random_looking(token: str) -> bool:
    if _HEX.match(token) or _UUID.match(token):
        return False  # commit hashes, checksums and ids are not credentials by shape alone
    digits = sum(c.isdigit() for c in token)
    upper = sum(c.isupper() for c in token)
    lower = sum(c.islower() for c in token)
    if digits < 2 or upper < 2 or lower < 2:
        return False
    # CamelCase names and product names are mostly words; random keys are mostly not.
    return _QUOTED.calculate_shannon_entropy(token) >= 3.5 and _wordish(token) < 0.65


_PROSE_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], bool]], ...] = (
    (_PROSE_ASSIGN, lambda match: _looks_like_a_credential(match.group("value"), assigned=True)),
    (_PROSE_IS, lambda match: _looks_like_a_credential(match.group("value"), assigned=False)),
    (_PROSE_LOGIN_AS, lambda match: _looks_like_a_credential(match.group("value"), assigned=False)),
    (_PROSE_LOGIN, _login_value_is_secret),
    (_PROSE_LOGIN_PAIR, lambda match: _password_like(match.group("value"))),
    (_PROSE_WITH_PASSWORD, _keyed_value_is_secret),
)


def _prose(text: str) -> Iterator[Finding]:
    folded = text.casefold()
    if not any(hint in folded for hint in _PROSE_HINTS):
        return  # no keyword the patterns start from: most ordinary facts stop here
    for pattern, is_secret in _PROSE_RULES:
        for match in pattern.finditer(text):
            if is_secret(match):
                yield Finding("ProsePassword", "a password or secret")
    if _PROSE_CJK.search(text):
        yield Finding("ProsePassword", "a password or secret")


def _high_entropy(text: str) -> Iterator[Finding]:
    for url in _URL.findall(text):
        if _URL_SECRET.search(url):
            yield Finding("UrlSecret", "a key or token in a URL")
    without_urls = _URL.sub(" ", text)
    for token in _TOKEN.findall(without_urls):
        if _random_looking(token):
            yield Finding("HighEntropyString", "a random-looking key or token")
    for quoted in _QUOTED.analyze_string(without_urls):
        if len(quoted) >= 20 and _QUOTED.calculate_shannon_entropy(quoted) >= _QUOTED.entropy_limit:
            yield Finding("Base64HighEntropyString", "a random-looking key or token")


def _cards(text: str) -> Iterator[Finding]:
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits) and len(set(digits)) > 1:
            yield Finding("CardNumber", "a payment card number")


def _shapes(text: str) -> Iterator[Finding]:
    for line in text.splitlines() or [text]:
        for detector, label in _DETECTORS:
            for _ in detector.analyze_string(line):
                yield Finding(type(detector).__name__, label)
    for rule, label, pattern in _SHAPES:
        if pattern.search(text):
            yield Finding(rule, label)


def find_secret(text: str) -> Finding | None:
    """The first credential-looking thing in normalised `text`, or None."""
    for finder in (_shapes, _prose, _high_entropy, _cards):
        for finding in finder(text):
            return finding
    return None
