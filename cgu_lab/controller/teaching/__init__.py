"""Teaching: courses' lab files, the Live tab, what a student sees of their courses,
assignments and submissions, templates, staff, and the course pages."""
