"""Code competitions and prediction competitions: the service, entries and their
scoring runs, teams, files, the GPUs runs take, the pages and routers."""
