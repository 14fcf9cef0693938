"""The server extension that runs inside every notebook server.

It knows who the caller is (`identity.ProxyIdentityProvider`), what they may
do (`authorizer.ShareAuthorizer`) and serves the routes the lab extension
calls under `<base_url>/cgu-lab/` (`handlers.py`).
"""
