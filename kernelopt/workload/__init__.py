"""Profile the shapes a kernel really sees in a call trace."""
