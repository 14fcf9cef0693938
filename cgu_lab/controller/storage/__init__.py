"""Storage that outlives notebooks: each user's own and each course's shared."""
