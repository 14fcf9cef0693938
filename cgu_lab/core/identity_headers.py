"""Which request headers a client may never hand to a notebook server: those naming a user.

A notebook server believes the identity the controller's proxy sends it (X-Cgu-User with
the proxy's secret) or, on Kubernetes behind an ingress, the one header the ingress sets
(`kubeflow-userid`, `x-auth-request-email`...). A client can write any header, so every
header that some proxy or ingress uses to name a user is removed from what a client sent,
whichever one this installation is configured with: a server configured later with
another header, or a tool in the notebook that reads a different one, must never see a
client's own copy. The proxy then adds the trusted one from the identity it
authenticated itself.

The names are compared lower-case, as HTTP/1.1 and ASGI servers hand them over.
"""

from __future__ import annotations

# Exact names: Kubeflow/Istio, Apache/nginx auth modules, generic SSO gateways.
IDENTITY_HEADERS = frozenset(
    {
        b"kubeflow-userid",
        b"kubeflow-groups",
        b"remote-user",
        b"remote-groups",
        b"x-remote-user",
        b"x-remote-group",
        b"x-remote-email",
        b"x-user",
        b"x-email",
        b"x-userinfo",
        b"x-webauth-user",
        b"x-auth-user",
        b"x-ms-client-principal",
        b"x-ms-client-principal-name",
        b"x-ms-client-principal-id",
    }
)
# Prefixes: the platform's own (X-Cgu-User, X-Cgu-Proxy-Secret...), oauth2-proxy's
# (x-auth-request-user/-email/-groups, x-forwarded-user/-email/-preferred-username; the
# proxy sets X-Forwarded-Host/-Proto/-For itself), Google IAP, AWS ALB, Pomerium and
# Cloudflare Access.
IDENTITY_PREFIXES = (
    b"x-cgu-",
    b"x-auth-request-",
    b"x-forwarded-",
    b"x-goog-authenticated-user-",
    b"x-goog-iap-",
    b"x-amzn-oidc-",
    b"x-pomerium-",
    b"cf-access-",
)


def names_a_user(name: bytes, configured: bytes = b"") -> bool:
    """Whether a client's header `name` (lower-case) could pass as an identity: one of the
    known identity headers, or `configured`, the lower-case header this installation's
    notebook servers trust (b"" for none)."""
    return (
        name in IDENTITY_HEADERS
        or name.startswith(IDENTITY_PREFIXES)
        or (bool(configured) and name == configured)
    )
