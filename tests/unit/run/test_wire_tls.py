"""The judges' HTTP client (run/wire.py) over TLS and through a CONNECT proxy, against the loopback fake API served
over HTTPS with a CA made here (tests/fakeapi/tls.py): one tunnel kept alive for a second call, NO_PROXY honoured,
SSL_CERT_FILE honoured, and a wrong CA, a missing CA file, a proxy that refuses the tunnel or a proxy this client
cannot speak to each a clear judge error naming the host and the fix, asked once (not retried, no traceback)."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillmake.run import wire
from skillmake.run.judges import anthropic_provider, openai_provider
from skillmake.run.judges.base import TOOL_NAME, Endpoint, JudgeCallError, JudgeRequest
from tests.fakeapi import FakeAPI, Reply
from tests.fakeapi.tls import Certificates, ConnectProxy

KEY = "sk-test-tls-0123456789abcdef"
VERDICT = {"passed": True}
REQUEST = JudgeRequest(judge="rubric", system="judge it", user="the output",
                       schema={"type": "object", "properties": {"passed": {"type": "boolean"}}})


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return Certificates.make(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    """A CA that did not sign the fake's certificate."""
    return Certificates.make(tmp_path_factory.mktemp("other"), name="other")


@pytest.fixture(scope="module")
def api(certs: Certificates) -> Iterator[FakeAPI]:
    with FakeAPI(tls=certs.server_context()) as fake:
        yield fake


@pytest.fixture(scope="module")
def proxy() -> Iterator[ConnectProxy]:
    with ConnectProxy() as fake_proxy:
        yield fake_proxy


@pytest.fixture(autouse=True)
def env(api: FakeAPI, proxy: ConnectProxy, certs: Certificates, monkeypatch: pytest.MonkeyPatch,
        judge_waits: list[float]) -> Iterator[None]:
    """The fake's CA trusted, HTTPS_PROXY pointing at the proxy, nothing bypassed; nothing left over."""
    api.reset()
    wire.close_all()
    proxy.tunnels.clear()
    proxy.requests.clear()
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy",
                 "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.ca))
    yield
    wire.close_all()
    assert api.errors == []


def anthropic(api: FakeAPI) -> Endpoint:
    return Endpoint(provider="anthropic", model="claude-sonnet-4-6", base_url=api.url, api_key=KEY)


def port(api: FakeAPI) -> int:
    return int(api.url.rsplit(":", 1)[1])


def test_the_fake_serves_https(api: FakeAPI) -> None:
    assert api.url.startswith("https://127.0.0.1:")


def test_a_judge_call_through_https_proxy_opens_one_tunnel_and_keeps_it(api: FakeAPI, proxy: ConnectProxy) -> None:
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    first = anthropic_provider.complete(REQUEST, anthropic(api))
    second = anthropic_provider.complete(REQUEST, anthropic(api))
    assert (first.data, second.data) == (VERDICT, VERDICT)
    assert api.count("/v1/messages") == 2
    assert proxy.tunnels == [("127.0.0.1", port(api))]  # the second call went through the same tunnel
    assert proxy.requests[0][0].startswith(f"CONNECT 127.0.0.1:{port(api)} HTTP/1.")
    assert "proxy-authorization" not in proxy.requests[0][1]


def test_the_openai_judge_goes_through_the_same_tunnel(api: FakeAPI, proxy: ConnectProxy) -> None:
    api.default = Reply.text(json.dumps(VERDICT))  # a chat completion in the response format
    endpoint = Endpoint(provider="openai", model="gpt-5.4", base_url=api.openai_url, api_key=KEY)
    for _ in range(2):
        assert openai_provider.complete(REQUEST, endpoint).data == VERDICT
    assert len(proxy.tunnels) == 1 and api.count() == 2


def test_the_proxys_credentials_go_with_the_connect(api: FakeAPI, proxy: ConnectProxy,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("http://", "http://judge:s%40cret@"))
    anthropic_provider.complete(REQUEST, anthropic(api))
    assert proxy.requests[0][1]["proxy-authorization"] == "Basic anVkZ2U6c0BjcmV0"  # judge:s@cret


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "localhost,127.0.0.1", "127.0.0.1:{port}", "10.0.0.0/8,127.0.0.0/8",
                                      "*"])
def test_no_proxy_bypasses_the_proxy(api: FakeAPI, proxy: ConnectProxy, monkeypatch: pytest.MonkeyPatch,
                                     no_proxy: str) -> None:
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    monkeypatch.setenv("NO_PROXY", no_proxy.format(port=port(api)))
    assert anthropic_provider.complete(REQUEST, anthropic(api)).data == VERDICT
    assert proxy.tunnels == [] and proxy.requests == [] and api.count() == 1


def test_a_wrong_ca_is_a_clear_error_naming_the_host(api: FakeAPI, proxy: ConnectProxy, other_ca: Certificates,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    monkeypatch.setenv("SSL_CERT_FILE", str(other_ca.ca))
    with pytest.raises(JudgeCallError) as caught:
        anthropic_provider.complete(REQUEST, anthropic(api))
    message = caught.value.message
    assert f"the TLS certificate of 127.0.0.1:{port(api)} is not trusted" in message, message
    assert f"SSL_CERT_FILE={other_ca.ca}" in message and f"through the proxy {proxy.url}" in message, message
    assert message.endswith("set SSL_CERT_FILE to the CA bundle that signed it (a TLS-inspecting proxy's own CA, "
                            "for one)"), message
    assert caught.value.requests == 1 and len(proxy.tunnels) == 1  # asked once: it would fail the same again
    assert api.count() == 0


def test_a_wrong_ca_without_a_proxy_too(api: FakeAPI, other_ca: Certificates, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(other_ca.ca))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(JudgeCallError, match=r"127\.0\.0\.1:\d+ is not trusted \(.*certificate") as caught:
        anthropic_provider.complete(REQUEST, anthropic(api))
    assert "proxy" not in caught.value.message.split(";")[0]


def test_a_missing_ca_file_is_a_clear_error(api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "no-such-bundle.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    with pytest.raises(JudgeCallError, match=f"cannot read the CA certificates of SSL_CERT_FILE={missing} .*; "
                                             "point SSL_CERT_FILE at a PEM bundle, or unset it"):
        anthropic_provider.complete(REQUEST, anthropic(api))


def test_ssl_cert_dir_is_honoured_as_httpx_does(api: FakeAPI, certs: Certificates, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    folder = tmp_path / "certs"
    folder.mkdir()
    subject_hash = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", str(certs.ca)], check=True,
                                  capture_output=True, text=True).stdout.strip()
    (folder / f"{subject_hash}.0").write_bytes(certs.ca.read_bytes())
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setenv("SSL_CERT_DIR", str(folder))
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    assert anthropic_provider.complete(REQUEST, anthropic(api)).data == VERDICT


@pytest.mark.parametrize(("status", "fix"), [
    (407, "give the proxy's credentials in the URL (http://user:password@host:port)"),
    (403, "ask the proxy's administrator to allow it"),
])
def test_a_proxy_that_refuses_the_tunnel_is_a_clear_error(api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
                                                          status: int, fix: str) -> None:
    with ConnectProxy(refuse=status) as refusing:
        monkeypatch.setenv("HTTPS_PROXY", refusing.url.replace("http://", "http://judge:hunter2@"))
        with pytest.raises(JudgeCallError) as caught:
            anthropic_provider.complete(REQUEST, anthropic(api))
        assert len(refusing.requests) == 1  # not retried
    message = caught.value.message
    assert (f"the proxy {refusing.url} of $HTTPS_PROXY refused a tunnel to 127.0.0.1:{port(api)} "
            f"({status} refused by the test); {fix}, or name 127.0.0.1 in NO_PROXY") in message, message
    assert "hunter2" not in message and api.count() == 0


@pytest.mark.parametrize("scheme", ["socks5", "https"])
def test_a_proxy_this_client_cannot_speak_to_is_said(api: FakeAPI, proxy: ConnectProxy,
                                                     monkeypatch: pytest.MonkeyPatch, scheme: str) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("http://", f"{scheme}://u:p@"))
    with pytest.raises(JudgeCallError, match=rf"\$HTTPS_PROXY names a {scheme}:// proxy \({scheme}://127\.0\.0\.1:"
                                             r"\d+\); the judges' client speaks to http:// proxies only"):
        anthropic_provider.complete(REQUEST, anthropic(api))
    assert proxy.requests == []


def system_paths(cafile: Path | str, capath: Path | str) -> ssl.DefaultVerifyPaths:
    return ssl.DefaultVerifyPaths(cafile=None, capath=None, openssl_cafile_env="SSL_CERT_FILE",
                                  openssl_cafile=str(cafile), openssl_capath_env="SSL_CERT_DIR",
                                  openssl_capath=str(capath))


def test_without_ssl_cert_file_the_systems_bundle_is_trusted_as_httpx2_does(api: FakeAPI, certs: Certificates,
                                                                            tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An administrator's CA in the system's bundle (update-ca-certificates) is trusted, as the SDK agents' httpx2
    trusts it; certifi's bundle is only the fallback where the system has none."""
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setattr(ssl, "get_default_verify_paths", lambda: system_paths(certs.ca, tmp_path / "none"))
    api.default = Reply.tool_use(TOOL_NAME, VERDICT)
    assert anthropic_provider.complete(REQUEST, anthropic(api)).data == VERDICT
    wire.close_all()
    monkeypatch.setattr(ssl, "get_default_verify_paths", lambda: system_paths(tmp_path / "none", tmp_path / "none"))
    with pytest.raises(JudgeCallError, match=r"is not trusted \(.*; checked against certifi="):
        anthropic_provider.complete(REQUEST, anthropic(api))
