"""Accounts: users and groups, log-in sessions and tokens, passwords, invitations, the
admin's and teachers' account management and class-list imports."""
