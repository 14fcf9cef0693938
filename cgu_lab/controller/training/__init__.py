"""Training jobs: multi-process and multi-node training on the backends."""
