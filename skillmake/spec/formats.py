"""The has_format registry (clauditor's 20 named formats) and the inline-regex fallback."""

from __future__ import annotations

import functools
import re

# Building blocks shared by several formats.
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_USD_AMOUNT = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{2})?"
_EUR_AMOUNT = r"(?:\d{1,3}(?:[.,  ]\d{3})+|\d+)(?:[.,]\d{2})?"
_URL_CHARS = r"[^\s<>\"'\[\]{}|\\^`()]"
_URL_END = r"[^\s<>\"'\[\]{}|\\^`().,;:!?*]"  # a URL never ends in sentence punctuation

# Each pattern matches exactly one value (used with fullmatch). Free text is searched with the
# same pattern wrapped in boundaries (see search_pattern), so "12345" inside "123456" is no zip.
FORMATS: dict[str, str] = {
    "currency_eur": rf"(?:€\s?{_EUR_AMOUNT}|{_EUR_AMOUNT}\s?€|EUR\s?{_EUR_AMOUNT}|{_EUR_AMOUNT}\s?EUR)",
    "currency_usd": rf"(?:(?:US)?\$\s?{_USD_AMOUNT}|USD\s?{_USD_AMOUNT}|{_USD_AMOUNT}\s?USD)",
    "date_iso": r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
                r"(?:T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?",
    "date_us": r"(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?:\d{4}|\d{2})",
    # A bare hostname; a scheme and a trailing slash are tolerated because LLMs often extract
    # "https://paesanosj.com/" where a domain was asked for (clauditor's url-vs-domain note).
    "domain": rf"(?:https?://)?{_HOST}/?",
    "email": rf"[A-Za-z0-9._%+-]+@{_HOST}",
    "hex_color": r"#(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{3,4})",
    "ipv4": _IPV4,
    "latitude": r"[-+]?(?:90(?:\.0+)?|[1-8]?\d(?:\.\d+)?)(?:\s?°)?(?:\s?[NSns])?",
    "longitude": r"[-+]?(?:180(?:\.0+)?|(?:1[0-7]\d|[1-9]?\d)(?:\.\d+)?)(?:\s?°)?(?:\s?[EWew])?",
    "percentage": r"[-+]?\d+(?:[.,]\d+)?\s?%",
    # E.164-ish: a '+', a country code, then 6-14 more digits in groups.
    "phone_intl": r"\+(?=(?:[\s.()-]*\d){7,15}(?![\s.()-]*\d))[1-9]\d{0,3}(?:[\s.-]?\(?\d{1,4}\)?){1,6}",
    "phone_us": r"(?:\+?1[\s.-]?)?(?:\([2-9]\d{2}\)|[2-9]\d{2})[\s.-]?[2-9]\d{2}[\s.-]?\d{4}",
    "star_rating": r"(?:(?:[0-4](?:\.\d{1,2})?|5(?:\.0{1,2})?)\s?(?:/\s?5(?:\.0)?|out of 5|★)(?:\s?stars?)?"
                   r"|(?:[0-4](?:\.\d{1,2})?|5(?:\.0{1,2})?)\s?stars?"
                   r"|★{5}|★{4}☆?|★{3}(?:☆{2})?|★{2}(?:☆{3})?|★(?:☆{4})?)",
    "time_12h": r"(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s?[AaPp](?:[Mm]|\.[Mm]\.?)",
    "time_24h": r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?",
    "url": rf"https?://(?:{_HOST}|{_IPV4}|localhost)(?::\d{{1,5}})?(?:[/?#](?:{_URL_CHARS}*{_URL_END})?)?",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "zip_uk": r"(?:GIR ?0AA|[A-Z]{1,2}\d[A-Z\d]? ?\d[ABD-HJLNP-UW-Z]{2})",
    "zip_us": r"\d{5}(?:-\d{4})?",
}

# What a value found in free text may not touch, so a format does not match a piece of a
# larger token: "1.2.3.4.5" holds no ipv4, "bob@example.com" holds no domain, "123456" no zip.
_BEFORE = r"(?<![\w.@/-])"
_AFTER = r"(?![\w@]|[.\-/:]\w)"
# Narrower searches where the bare pattern would flood free text with false hits.
_SEARCH_EXTRA: dict[str, str] = {
    # A bare small number is a count, not a coordinate: in text require decimals or a degree sign.
    "latitude": r"(?=[-+]?\d+(?:\.\d+|\s?°))",
    "longitude": r"(?=[-+]?\d+(?:\.\d+|\s?°))",
}
_AFTER_EXTRA: dict[str, str] = {
    "time_24h": r"(?!\s?[AaPp]\.?[Mm]\b)",  # "10:30 PM" is a 12h time
}


def list_formats() -> list[str]:
    return sorted(FORMATS)


def is_registered(fmt: str) -> bool:
    return fmt in FORMATS


@functools.cache
def compile_format(fmt: str) -> re.Pattern[str]:
    """A registered format's regex, or `fmt` itself compiled as an inline regex (may raise re.error)."""
    return re.compile(FORMATS.get(fmt, fmt))


def matches(fmt: str, value: str) -> bool:
    """Does `value` (surrounding whitespace ignored) match `fmt` as a whole (anchored fullmatch)?"""
    return compile_format(fmt).fullmatch(value.strip()) is not None


@functools.cache
def search_pattern(fmt: str) -> re.Pattern[str]:
    """The pattern that finds values of a registered format inside free text."""
    if fmt not in FORMATS:
        raise KeyError(f"{fmt!r} is not a registered format")
    return re.compile(_BEFORE + _SEARCH_EXTRA.get(fmt, "") + f"(?:{FORMATS[fmt]})" + _AFTER
                      + _AFTER_EXTRA.get(fmt, ""))


_STRIP = "\"'`.,;:!?()[]{}<>*_"


def find_values(fmt: str, text: str) -> list[str]:
    """Every value of `fmt` in `text`, in order.

    A registered format is searched for with boundaries. An inline regex is matched in full
    against candidate tokens: each whitespace-separated token (also with surrounding
    punctuation and markdown emphasis stripped), plus each whole line that has inner spaces,
    so a multi-word pattern can still match a line.
    """
    if fmt in FORMATS:
        return [m.group(0) for m in search_pattern(fmt).finditer(text)]
    pattern = compile_format(fmt)
    found: list[str] = []
    for line in text.splitlines():
        for token in line.split():
            stripped = token.strip(_STRIP)
            for candidate in (token, stripped):
                if candidate and pattern.fullmatch(candidate):
                    found.append(candidate)
                    break
        whole = line.strip()
        if " " in whole and pattern.fullmatch(whole):
            found.append(whole)
    return found


# clauditor 0.1.3's own registry (clauditor/formats.py), verbatim: a clauditor spec's `has_format` counts
# `re.findall(extract, output)` and its section fields match `re.fullmatch(strict, value)`, so a clauditor spec gets
# the verdicts clauditor gives (tests/differential compares the two). skillmake's FORMATS above stay the native meaning.
# name → (strict, extract); every pattern here but zip_uk and uuid uses one shape for both.
CLAUDITOR_FORMATS: dict[str, tuple[str, str]] = {name: (strict, extract or strict) for name, strict, extract in (
    ("phone_us", r"\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}", None),
    ("phone_intl", r"\+\d{1,3}[\s.-]?\d{4,14}", None),
    ("email", r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}", None),
    ("url", r"https?://[^\s\)\"'>]+", None),
    ("domain", r"(?i)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}", None),
    ("date_iso", r"\d{4}-\d{2}-\d{2}", None),
    ("date_us", r"\d{1,2}/\d{1,2}/\d{2,4}", None),
    ("time_24h", r"\d{1,2}:\d{2}(?::\d{2})?", None),
    ("time_12h", r"\d{1,2}:\d{2}\s?[AaPp][Mm]", None),
    ("currency_usd", r"\$(?=[\d,]*\d)[\d,]+(?:\.\d{2})?", None),
    ("currency_eur", r"€(?=[\d.,]*\d)[\d.,]+", None),
    ("zip_us", r"\d{5}(?:-\d{4})?", None),
    ("zip_uk", r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}", r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"),
    ("percentage", r"\d+(?:\.\d+)?%", None),
    ("ipv4", r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}", None),
    ("uuid", r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
     r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    ("hex_color", r"#[0-9a-fA-F]{6}", None),
    ("latitude", r"-?\d{1,2}\.\d+", None),
    ("longitude", r"-?\d{1,3}\.\d+", None),
    ("star_rating", r"\d(?:\.\d)?\s?(?:stars?|★|⭐)", None),
)}
# clauditor's has_urls and urls_reachable find URLs with this (assertions.py), every occurrence counted.
CLAUDITOR_URL = r"https?://[^\s\)\"'>]+"
# clauditor's has_entries counts only bold numbered entries: `**1. `.
CLAUDITOR_ENTRY = r"\*\*\d+\.\s+"
