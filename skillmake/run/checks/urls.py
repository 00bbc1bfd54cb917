"""urls_reachable: a HEAD request to each URL in the output; enough of them must answer 2xx."""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from skillmake.run.checks.base import CheckContext, Target, Verdict, listing
from skillmake.run.checks.patterns import urls_in
from skillmake.spec.model import Check

_MAX_URLS = 20  # a runaway output must not turn one check into hundreds of requests


@functools.cache
def _opener() -> Any:
    """urllib's opener, following redirects with HEAD again (its default handler switches to GET). Built on first
    use: urllib.request brings ssl and http.client, ~10 MiB of a run that checks no URL (bench/memory.py)."""
    import urllib.request

    class HeadRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                             newurl: str) -> urllib.request.Request | None:
            new = super().redirect_request(req, fp, code, msg, headers, newurl)
            if new is not None:
                new.method = "HEAD"
            return new

    return urllib.request.build_opener(HeadRedirects)


def head_status(url: str, *, timeout: float) -> tuple[int | None, str]:
    """The final HTTP status of a HEAD request, or None and why it failed."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "skillmake-check/1"})
    try:
        with _opener().open(request, timeout=timeout) as response:
            return int(response.status), f"{response.status}"
    except urllib.error.HTTPError as exc:
        return exc.code, f"{exc.code}"
    except urllib.error.URLError as exc:
        return None, f"unreachable ({exc.reason})"
    except (TimeoutError, OSError, ValueError) as exc:
        return None, f"unreachable ({type(exc).__name__}: {exc})"


def urls_reachable(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    need: int = check.params.get("count", 1)
    timeout: float = float(check.params.get("timeout", 10))
    urls = urls_in(target.text)
    if len(urls) < need:
        return Verdict(False, f"found {len(urls)} URL(s), needed {need} reachable: {listing(urls) or 'none'}")
    tried = urls[:_MAX_URLS]
    # Concurrent, so twenty slow hosts cost one timeout, not twenty; results keep the text's order.
    with ThreadPoolExecutor(max_workers=min(8, len(tried))) as pool:
        statuses = list(pool.map(lambda url: head_status(url, timeout=timeout), tried))
    good = [url for url, (status, _) in zip(tried, statuses, strict=True) if status is not None and 200 <= status < 300]
    bad = [f"{url} → {why}" for url, (status, why) in zip(tried, statuses, strict=True)
           if status is None or not 200 <= status < 300]
    evidence = f"{len(good)} of {need} needed URLs answered 2xx"
    if good:
        evidence += f": {listing(good)}"
    if bad:
        evidence += f"; failed: {listing(bad, 3)}"
    return Verdict(len(good) >= need, evidence)


CHECKS = {"urls_reachable": urls_reachable}
