"""Read, query, lint and update the optimization / anti-pattern catalog."""
