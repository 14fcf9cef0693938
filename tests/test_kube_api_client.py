"""The Kubernetes API client reads its proxy from the environment once, where the
kubeconfig names none, and its session does not look the environment (or ~/.netrc) up
again before each request."""

import asyncio

import pytest

from cgu_lab.backends.kube_api import load_client

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: school
  cluster: {{server: "https://10.1.2.3:6443", insecure-skip-tls-verify: true{proxy}}}
users:
- name: controller
  user: {{token: "secret"}}
contexts:
- name: school
  context: {{cluster: school, user: controller}}
current-context: school
"""


def session_of(tmp_path, monkeypatch, proxy_env: dict[str, str], proxy_url: str = ""):
    for name in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in proxy_env.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG.format(proxy=f', proxy-url: "{proxy_url}"' if proxy_url else ""))

    async def made():
        api = await load_client(str(path))
        try:
            session = api.rest_client._create_pool_manager()
            try:
                return api.configuration.proxy, session.trust_env
            finally:
                await session.close()
        finally:
            await api.close()

    return asyncio.run(made())


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, None),
        ({"HTTPS_PROXY": "http://proxy.school.edu:3128"}, "http://proxy.school.edu:3128"),
        ({"https_proxy": "http://proxy.school.edu:3128", "NO_PROXY": "10.1.2.3"}, None),
        ({"HTTPS_PROXY": "http://proxy.school.edu:3128", "no_proxy": "10.0.0.0/8"}, None),
    ],
)
def test_the_proxy_comes_from_the_environment_once(tmp_path, monkeypatch, environment, expected):
    assert session_of(tmp_path, monkeypatch, environment) == (expected, False)


def test_a_proxy_named_in_the_kubeconfig_wins(tmp_path, monkeypatch):
    env = {"HTTPS_PROXY": "http://other:3128"}
    proxy, trust_env = session_of(tmp_path, monkeypatch, env, "http://kubeconfig-proxy:8080")
    assert (proxy, trust_env) == ("http://kubeconfig-proxy:8080", False)
