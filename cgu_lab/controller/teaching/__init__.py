"""Teaching: courses' coursework (lab files, live views), assignments and submissions,
templates, staff, and the course pages."""
