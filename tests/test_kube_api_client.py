"""The Kubernetes API client's session looks the environment (and ~/.netrc) up before each
request only where a proxy is named for the API server: NO_PROXY's names and networks
(10.0.0.0/8, as kubectl reads them) spare it, and so does an environment with no proxy."""

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
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
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
    ("environment", "looks_up"),
    [
        ({}, False),
        ({"HTTPS_PROXY": "http://proxy.school.edu:3128"}, True),
        ({"https_proxy": "http://proxy.school.edu:3128", "NO_PROXY": "10.1.2.3"}, False),
        ({"HTTPS_PROXY": "http://proxy.school.edu:3128", "no_proxy": "10.0.0.0/8"}, False),
        ({"HTTP_PROXY": "http://proxy.school.edu:3128"}, False),  # plain HTTP's only
    ],
)
def test_the_session_looks_a_proxy_up_only_where_one_is_named(
    tmp_path, monkeypatch, environment, looks_up
):
    assert session_of(tmp_path, monkeypatch, environment) == (None, looks_up)


def test_a_proxy_named_in_the_kubeconfig_is_used_and_the_session_keeps_looking(
    tmp_path, monkeypatch
):
    env = {"HTTPS_PROXY": "http://other:3128"}
    proxy, trust_env = session_of(tmp_path, monkeypatch, env, "http://kubeconfig-proxy:8080")
    assert (proxy, trust_env) == ("http://kubeconfig-proxy:8080", True)
