"""Log in with the school's accounts: OpenID Connect providers and LDAP directories.

The standalone controller is the OpenID client itself (oidc.py, its login flow
oidc_login.py) and binds to a school's LDAP directory as the user (ldap.py, its login
ldap_login.py); accounts.py, shared by both, turns who the directory says a user is
into a platform account (created at the first login, updated at each later one, its
role and courses mapped by an administrator's rules, rules.py, and places taken from
the teachers' pre-enrolments, pre_enrolments.py); service.py puts them together for
the platform and checks now and then that the directory still knows the user. Behind
a Kubeflow ingress the identity header stays the way in; nothing here changes that.
"""
