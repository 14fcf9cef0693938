"""A teacher's demo site: a notebook's app published to a course or to every logged-in user."""
