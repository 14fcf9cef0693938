"""Log in with the school's accounts: OpenID Connect providers and LDAP directories.

The standalone controller is the OpenID client itself (oidc.py) and binds to a
school's LDAP directory as the user (ldap.py); service.py turns who the directory
says a user is into a platform account (created at the first login, updated at
each later one, its role and courses mapped by an administrator's rules), and
checks now and then that the directory still knows the user. Behind a Kubeflow
ingress the identity header stays the way in; nothing here changes that.
"""
