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
from collections.abc import Iterator
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
    r"contrase[nñ]a|passwort|kennwort|senha)"
)
_PROSE_IS = re.compile(
    rf"\b{_PROSE_KEYWORD}(?:\s+(?:for|to|of|on)\s+(?:[^\s.,;:]+\s+){{0,5}}?[^\s.,;:]+)?"
    r"\s+(?:(?:is|was|are|will\s+be|reads|ist|est|es|é|är)\b|[=:\-])\s*(?P<value>\S+)",
    re.I,
)
_PROSE_ASSIGN = re.compile(rf"\b{_PROSE_KEYWORD}[\"']?\s*[:=]\s*(?P<value>\S+)", re.I)
_PROSE_LOGIN = re.compile(
    r"\b(?:log\s*-?\s*in|sign\s*-?\s*in|login|ssh)\s+(?:as|with|to)\s+\S+\s+(?:with|using|and|/)\s+"
    r"(?:(?:the\s+)?(?:password|pw|pwd)\s+)?(?P<value>\S+)",
    re.I,
)
_PROSE_HINTS = tuple(
    "pass pw pin secret key token code cvv senha contrase kennwort log sign ssh 密 口令 パス 비밀".split()
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
_ADJECTIVE_ENDINGS = ("ed", "ing", "able", "ible", "ful", "less", "ive", "ous", "ent", "ant", "ic", "ly", "ary")

_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{20,}(?![A-Za-z0-9+/=_\-])")
_URL = re.compile(r"[a-z][a-z0-9+.\-]*://\S+", re.I)
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


def _prose(text: str) -> Iterator[Finding]:
    folded = text.casefold()
    if not any(hint in folded for hint in _PROSE_HINTS):
        return  # no keyword the patterns start from: most ordinary facts stop here
    for pattern, assigned in ((_PROSE_ASSIGN, True), (_PROSE_IS, False), (_PROSE_LOGIN, False)):
        for match in pattern.finditer(text):
            if _looks_like_a_credential(match.group("value"), assigned=assigned):
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
