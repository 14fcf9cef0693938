"""An operator's webhook configurations, called by URL on this host (scripts/kube-cluster.sh).

    kubectl create --dry-run=client -o json -f manifests.yaml |
      python3 kube_webhooks.py BASE_URL CA_FILE NAME_PREFIX WANTED... > webhooks.json

Upstream manifests point each webhook at the operator's Service, where the operator
runs as a pod; the test cluster runs it on the host, which the API server reaches
directly. So each kept webhook's clientConfig becomes BASE_URL + its Service path, with
the CA that signed the operator's serving certificate, and each configuration's name
gets NAME_PREFIX (its own, beside another instance's). A WANTED is an API group
("kueue.x-k8s.io": every webhook on that group) or group/resource
("kubeflow.org/pytorchjobs"): webhooks of integrations that are not enabled have no
handler behind them and are left out, as the API server would otherwise fail (or
wait on) every request they match. Standard library only: it runs before any venv.
"""

from __future__ import annotations

import base64
import json
import sys


def wanted(webhook: dict, choices: list[str]) -> bool:
    for rule in webhook.get("rules") or []:
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                if group in choices or f"{group}/{resource}" in choices:
                    return True
    return False


def main() -> None:
    base_url, ca_file, prefix, *choices = sys.argv[1:]
    with open(ca_file, "rb") as ca:
        bundle = base64.b64encode(ca.read()).decode()
    # kubectl prints one object per document, one after another (a List for one file of several)
    text, decoder, items, at = sys.stdin.read(), json.JSONDecoder(), [], 0
    while text[at:].strip():
        given, end = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        items += given.get("items", []) if given.get("kind") == "List" else [given]
        at = end
    kept = []
    for item in items:
        if item.get("kind") not in (
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ):
            continue
        hooks = [hook for hook in item.get("webhooks") or [] if wanted(hook, choices)]
        for hook in hooks:
            path = (hook.get("clientConfig", {}).get("service") or {}).get("path", "/")
            hook["clientConfig"] = {"url": base_url + path, "caBundle": bundle}
        if hooks:
            item["metadata"] = {"name": prefix + item["metadata"]["name"]}
            item["webhooks"] = hooks
            kept.append(item)
    if not kept:
        sys.exit("kube_webhooks.py: no webhook matched " + " ".join(choices))
    json.dump({"apiVersion": "v1", "kind": "List", "items": kept}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
