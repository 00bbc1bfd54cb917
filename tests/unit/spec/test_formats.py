"""The format registry: every named format accepts realistic values and rejects obvious non-values."""

from __future__ import annotations

import re

import pytest

from skillmake.spec.formats import FORMATS, compile_format, find_values, list_formats, matches, search_pattern

GOOD: dict[str, list[str]] = {
    "currency_eur": ["€12", "€ 1.234,56", "1.234,56 €", "EUR 99", "12,50€", "1 234,56 EUR"],
    "currency_usd": ["$5", "$1,234.56", "$ 12.00", "USD 100", "100 USD", "US$40"],
    "date_iso": ["2024-01-31", "1999-12-01", "2024-02-29T10:30:00Z", "2024-06-01T08:15+02:00"],
    "date_us": ["1/2/2024", "12/31/99", "07/04/1776"],
    "domain": ["example.com", "paesanosj.com", "www.bbc.co.uk", "my-site.io", "https://paesanosj.com/"],
    "email": ["bob@example.com", "first.last+tag@mail.co.uk", "x_y%z@a-b.org"],
    "hex_color": ["#fff", "#FFFFFF", "#1a2B3c", "#11223344"],
    "ipv4": ["127.0.0.1", "192.168.1.254", "0.0.0.0", "255.255.255.255"],
    "latitude": ["37.7749", "-33.8688", "90", "51.5074° N", "40.7128°N", "+0.5"],
    "longitude": ["-122.4194", "151.2093", "180.0", "0.1278° W", "139.6917E"],
    "percentage": ["50%", "12.5 %", "-3%", "100%", "0,5%"],
    "phone_intl": ["+44 20 7946 0958", "+1-408-555-1234", "+33 1 42 68 53 00", "+81 (3) 1234-5678", "+4915123456789"],
    "phone_us": ["(408) 555-1234", "408-555-1234", "408.555.1234", "4085551234", "+1 408 555 1234", "1-800-555-0199"],
    "star_rating": ["4.5/5", "4 / 5", "3 stars", "1 star", "4.5 out of 5", "★★★★☆", "★★★", "4.2★", "5.0/5"],
    "time_12h": ["10:30 AM", "9:05pm", "12:00 p.m.", "3 PM", "07:45am"],
    "time_24h": ["23:59", "00:00", "9:30", "18:45:10"],
    "url": ["https://example.com", "http://127.0.0.1:8000/x", "https://a.b.org/p?q=1#frag",
            "http://localhost:3000/", "https://en.example.org/wiki/Main_Page"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"],
    "zip_uk": ["SW1A 1AA", "M1 1AE", "B33 8TH", "CR2 6XH", "DN55 1PT", "EC1A1BB"],
    "zip_us": ["95014", "95014-1234", "02134"],
}

BAD: dict[str, list[str]] = {
    "currency_eur": ["€", "12", "€1,2345", "EUR", "$12"],
    "currency_usd": ["$", "1234", "$1,23", "$abc", "$1.234", "€5"],
    "date_iso": ["2024-13-01", "2024-1-5", "20240101", "2024-02-32", "24-01-01"],
    "date_us": ["13/01/2024", "1/32/2024", "2024/01/01", "1-2-2024"],
    "domain": ["localhost", "example", "-bad.com", "a..com", "https://x.com/path", "bob@example.com"],
    "email": ["a@b", "@x.com", "a@.com", "a b@c.com", "bob.example.com"],
    "hex_color": ["#12", "#GGG", "123456", "#12345", "#1234567"],
    "ipv4": ["256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "a.b.c.d"],
    "latitude": ["91", "-90.5", "abc", "37.7.1", "45 E"],
    "longitude": ["181", "-180.5", "abc", "12.3.4", "45 N"],
    "percentage": ["%", "50", "abc%", "5 0%"],
    "phone_intl": ["+12", "44 20 7946 0958", "+0 123 4567", "+44 abc", "+1234567890123456"],
    "phone_us": ["123-456-7890", "408-555-123", "(408 555-1234", "555-1234", "408-155-1234"],
    "star_rating": ["6/5", "4.5/10", "stars", "★★★★★★", "★★★☆☆☆", "five stars"],
    "time_12h": ["13:00 PM", "3:60 pm", "10:30", "0:30 am"],
    "time_24h": ["25:00", "12:60", "1230", "24:00", "9"],
    "url": ["http://", "ftp://x.com", "www.example.com", "https://exa mple.com", "https:/x.com", "https://x.com."],
    "uuid": ["123e4567-e89b-12d3-a456-42661417400", "123e4567e89b12d3a456426614174000",
             "g23e4567-e89b-12d3-a456-426614174000"],
    "zip_uk": ["12345", "SW1A", "ABC 123", "SW1A 1CA"],
    "zip_us": ["1234", "123456", "12345-67", "abcde"],
}


def test_registry_has_clauditors_twenty_formats() -> None:
    assert list_formats() == sorted(GOOD) == sorted(BAD)
    assert len(FORMATS) == 20


@pytest.mark.parametrize(("fmt", "value"), [(f, v) for f, vs in GOOD.items() for v in vs])
def test_format_accepts_realistic_value(fmt: str, value: str) -> None:
    assert matches(fmt, value), f"{fmt} should accept {value!r}"


@pytest.mark.parametrize(("fmt", "value"), [(f, v) for f, vs in BAD.items() for v in vs])
def test_format_rejects_non_value(fmt: str, value: str) -> None:
    assert not matches(fmt, value), f"{fmt} should reject {value!r}"


@pytest.mark.parametrize(("fmt", "value"), [(f, vs[0]) for f, vs in GOOD.items()])
def test_format_found_inside_prose(fmt: str, value: str) -> None:
    text = f"Details: {value}. More text follows"
    assert find_values(fmt, text) == [value]


@pytest.mark.parametrize(("fmt", "text"), [
    ("zip_us", "order 1234567 shipped"),
    ("ipv4", "version 1.2.3.4.5"),
    ("domain", "mail bob@example.com today"),
    ("domain", "see https://example.com/menu"),
    ("latitude", "there are 5 items"),
    ("time_24h", "at 10:30 PM"),
    ("email", "no address here"),
    ("url", "go to www.example.com"),
])
def test_format_not_found_in_prose(fmt: str, text: str) -> None:
    assert find_values(fmt, text) == []


def test_url_search_drops_trailing_punctuation() -> None:
    text = "See https://a.example/x. Also (https://b.example/y), and [c](https://c.example/)!"
    assert find_values("url", text) == ["https://a.example/x", "https://b.example/y", "https://c.example/"]


def test_inline_regex_is_a_fullmatch_over_tokens() -> None:
    assert find_values(r"\d{5}", "zips: 95014, 123456 and (02134).") == ["95014", "02134"]
    assert find_values(r"^[A-Z]{3}$", "ABC abc ABCD **XYZ**") == ["ABC", "XYZ"]
    assert find_values(r"Main St \d+", "addr:\n Main St 12 \n") == ["Main St 12"]


def test_inline_regex_used_when_not_registered() -> None:
    assert compile_format(r"\d+").pattern == r"\d+"
    assert matches(r"\d+", " 42 ")
    with pytest.raises(KeyError):
        search_pattern(r"\d+")
    with pytest.raises(re.error):
        compile_format("(")
